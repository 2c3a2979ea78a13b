import type { ConsoleRider, RevokedRiderTokens } from "../shared/api/console-riders.ts";
import { call } from "./api.ts";

/** The console's calls for riders (cloud/http/routes/console-riders.ts). */

export type { ConsoleRider, RevokedRiderTokens };

export const getRider = (id: string) =>
  call<ConsoleRider>("GET", `/console/api/riders/${encodeURIComponent(id)}`);

export const revokeRiderTokens = (id: string, reason: string) =>
  call<RevokedRiderTokens>("POST", `/console/api/riders/${encodeURIComponent(id)}/revoke-tokens`, {
    reason,
  });
