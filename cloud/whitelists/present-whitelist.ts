import { deviceUri, locationUri } from "../../shared/api/uris.ts";
import type { Whitelist, WhitelistEntity, WhitelistTarget } from "../../shared/api/whitelist.ts";
import { entityStatus } from "../../shared/domain/whitelist-entity.ts";
import type {
  WhitelistEntitiesTable,
  WhitelistsTable,
  WhitelistTargetsTable,
} from "../store/tables/whitelist-tables.ts";

export const whitelistUri = (id: string) => `/whitelist/v1/whitelists/${id}`;

export function presentWhitelist(row: WhitelistsTable): Whitelist {
  return { name: row.name, description: row.description, id: row.id, uri: whitelistUri(row.id) };
}

/** EXPIRED is derived here, at the injected clock's now (shared/domain/whitelist-entity.ts). */
export function presentEntity(row: WhitelistEntitiesTable, now: Date): WhitelistEntity {
  return {
    id: row.card_id,
    id_type: "rfid",
    status: entityStatus(row.status, row.expires_at, now),
    expires_at: row.expires_at ?? "",
    is_master_key: row.is_master_key === 1,
    comment: row.comment,
    created_at: row.created_at,
  };
}

/** Spec: read responses hold reference {id, uri}, keys_only, id_type and id. */
export function presentTarget(row: WhitelistTargetsTable): WhitelistTarget {
  const uri = row.target_type === "device" ? deviceUri(row.target_id) : locationUri(row.target_id);
  return {
    id: row.target_id,
    id_type: row.target_type,
    keys_only: row.keys_only === 1,
    reference: { id: row.target_id, uri },
  };
}
