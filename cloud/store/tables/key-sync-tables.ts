import type { AccessDecision, Grant, GrantKey } from "../../../shared/wire/messages.ts";
import type { Json } from "../json-column.ts";

/** Store tables of the gateways' key views (see cloud/store/schema.ts for the conventions). */

/** The key-set version of each gateway, and the one the gateway last said it holds. */
export interface GatewayKeyVersionsTable {
  gateway_id: string;
  version: number;
  confirmed_version: number | null;
  confirmed_at: string | null;
  updated_at: string;
}

/** The grants a gateway should hold now: its current key view, one row per (whitelist, card). */
export interface GatewayGrantsTable {
  gateway_id: string;
  whitelist_id: string;
  card_id: string;
  grant: Json<Grant>;
}

/** What one version changed in a gateway's view: what a delta from the version before carries. */
export type KeyChangeSet = { upserts: Grant[]; removals: GrantKey[] };

export interface GatewayKeyChangesTable {
  gateway_id: string;
  version: number;
  changes: Json<KeyChangeSet>;
  created_at: string;
}

/** A tap as a gateway decided it (and what it did about it), kept for the operator. */
export interface AccessEventsTable {
  gateway_id: string;
  /** The outbox the message came from ('' : none named); with `seq`, the message. */
  outbox_id: string;
  seq: number;
  operator_id: string;
  location_id: string;
  device_id: string | null;
  reader: string;
  card_id: string;
  granted: number;
  action: AccessDecision["action"];
  reason: string;
  whitelist_id: string | null;
  decided_by: AccessDecision["decided_by"];
  actuated: number | null;
  observed_at: string;
  received_at: string;
}

export interface KeySyncTables {
  gateway_key_versions: GatewayKeyVersionsTable;
  gateway_grants: GatewayGrantsTable;
  gateway_key_changes: GatewayKeyChangesTable;
  access_events: AccessEventsTable;
}
