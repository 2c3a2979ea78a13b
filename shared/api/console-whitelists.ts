/**
 * The console's whitelist answers (cloud/http/routes/console-whitelists.ts): types only, so the console's
 * bundle imports no schema library. The cards are the public API's entities; the rest is the console's.
 */
import type { WhitelistEntity } from "./whitelist.ts";

/** Where a gateway stands with the key set the cloud keeps for it. */
export type KeySyncState =
  /** It said it holds the cloud's version. */
  | "in_sync"
  /** The cloud's version moved past what it holds (or it never said, and there is something to hold). */
  | "pending"
  /** It never said what it holds, and the cloud has no keys for it yet. */
  | "not_reported";

/** One gateway serving a target of the whitelist, with its key-set version against the cloud's. */
export type ConsoleGatewaySync = {
  gateway_id: string;
  location_id: string;
  /** Whether this whitelist's cards go to this gateway (a keys_only target it serves). */
  keys_synced: boolean;
  state: KeySyncState;
  cloud_version: number;
  /** The version the gateway last said it holds; null: never said. */
  held_version: number | null;
  confirmed_at: string | null;
  /** When the cloud's version first moved past the held one (pending only). */
  pending_since: string | null;
  /** False when that version's record is gone and `pending_since` is the latest change's time instead. */
  pending_since_exact: boolean;
};

/** A target with what names it in the console: a location's `#code label`, a device's alias there. */
export type ConsoleWhitelistTarget = {
  type: "device" | "location";
  id: string;
  keys_only: boolean;
  /** `#L1 Lockers one`, or `#L1 Lockers one · 3` for a device; null when the target is gone. */
  label: string | null;
  /** The target's location (a location target's own id). */
  location_id: string | null;
};

/** One whitelist in the list. */
export type ConsoleWhitelistSummary = {
  id: string;
  operator_id: string;
  name: string;
  description: string;
  cards: number;
  targets: { locations: number; devices: number; keys_only: number };
  sync: { gateways: number; pending: number };
};

export type ConsoleWhitelistList = { data: ConsoleWhitelistSummary[] };

/** A whitelist's page: its cards as the public API reads them, its targets and its gateways' sync. */
export type ConsoleWhitelist = {
  id: string;
  operator_id: string;
  name: string;
  description: string;
  cards: WhitelistEntity[];
  targets: ConsoleWhitelistTarget[];
  gateways: ConsoleGatewaySync[];
  /** The cloud's clock when this was read. */
  now: string;
};

/** A refused card (the public batch's failed item): its code and message. */
export type ConsoleCardRefusal = { error_code: string; error_message: string };
