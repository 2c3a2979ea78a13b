import type { StoredEntityStatus, TargetType } from "../../../shared/domain/whitelist-entity.ts";

/** Store tables of RFID whitelists (see cloud/store/schema.ts for the conventions). */

/** A named list of RFID cards, declared in the site manifest (a fixed id integrators address it by). */
export interface WhitelistsTable {
  id: string;
  operator_id: string;
  name: string;
  description: string;
  created_at: string;
  updated_at: string;
}

/** A card in a whitelist. EXPIRED is never stored: reads derive it from `expires_at`. */
export interface WhitelistEntitiesTable {
  whitelist_id: string;
  /** Lowercase hex, even length, at most 20 characters (shared/domain/card-id.ts). */
  card_id: string;
  status: StoredEntityStatus;
  /** RFC 3339 UTC; null when the card does not expire. */
  expires_at: string | null;
  /** 0/1 */
  is_master_key: number;
  comment: string;
  created_at: string;
  updated_at: string;
}

/** A device or location of the whitelist's operator that the whitelist applies to. */
export interface WhitelistTargetsTable {
  whitelist_id: string;
  target_type: TargetType;
  /** A device id or a location id, by target_type. */
  target_id: string;
  /** 0/1: the keys are synchronised to the gateway for offline decisions (and not shown to app users). */
  keys_only: number;
  created_at: string;
}

export interface WhitelistTables {
  whitelists: WhitelistsTable;
  whitelist_entities: WhitelistEntitiesTable;
  whitelist_targets: WhitelistTargetsTable;
}
