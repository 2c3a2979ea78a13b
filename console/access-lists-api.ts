import type { ConsoleAccessList, ConsoleAccessListList } from "../shared/api/console-access-lists.ts";
import { call } from "./api.ts";

/** The console's calls for access lists (cloud/http/routes/console-access-lists.ts). */

export type { ConsoleAccessList, ConsoleAccessListList };

const base = (id: string) => `/console/api/access-lists/${encodeURIComponent(id)}`;

export const listAccessLists = () => call<ConsoleAccessListList>("GET", "/console/api/access-lists");

export const getAccessList = (id: string) => call<ConsoleAccessList>("GET", base(id));

/** The public API's add body: exactly one of user_id and phone_number. */
export const addMember = (id: string, body: { user_id?: string; phone_number?: string; comment?: string }) =>
  call<void>("POST", `${base(id)}/members`, body);

/** The public API's remove body: a member by user_id, or an invite (or member) by phone_number. */
export const removeMember = (
  id: string,
  body: { user_id?: string; phone_number?: string; remove_now?: boolean },
) => call<void>("POST", `${base(id)}/remove`, body);
