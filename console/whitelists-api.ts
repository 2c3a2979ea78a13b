import type {
  ConsoleGatewaySync,
  ConsoleWhitelist,
  ConsoleWhitelistList,
} from "../shared/api/console-whitelists.ts";
import { call } from "./api.ts";

/** The console's calls for whitelists (cloud/http/routes/console-whitelists.ts). */

export type { ConsoleGatewaySync, ConsoleWhitelist, ConsoleWhitelistList };

const base = (id: string) => `/console/api/whitelists/${encodeURIComponent(id)}`;

export const listWhitelists = () => call<ConsoleWhitelistList>("GET", "/console/api/whitelists");

export const getWhitelist = (id: string) => call<ConsoleWhitelist>("GET", base(id));

/** A card as the public ADD takes an entity; the cloud checks it with the API's schema. */
export type NewCard = {
  id: string;
  status: string;
  expires_at?: string;
  is_master_key: boolean;
  comment: string;
};

export const addCard = (id: string, card: NewCard) => call<void>("POST", `${base(id)}/cards`, card);

export const removeCard = (id: string, cardId: string) =>
  call<void>("DELETE", `${base(id)}/cards/${encodeURIComponent(cardId)}`);
