import type { Grant } from "../../shared/wire/messages.ts";
import type { Executor } from "../store/db.ts";

/** What one whitelist targets at one gateway: its location, and/or some of the devices it drives. */
export type KeyScope = { location_ids: string[]; device_ids: string[] };

type EntityRow = {
  card_id: string;
  whitelist_id: string;
  status: "ACTIVE" | "INACTIVE";
  expires_at: string | null;
  is_master_key: number;
};

/**
 * The gateways a whitelist reaches through its targets, with what it targets at each (spec: Target). Only
 * keys_only targets are synchronised to gateways; a card answered on demand may use any (`keysOnly` false).
 */
export async function keyScopesOf(
  db: Executor,
  whitelistId: string,
  keysOnly = true,
): Promise<Map<string, KeyScope>> {
  const scopes = new Map<string, KeyScope>();
  const scopeOf = (gatewayId: string) => {
    const s = scopes.get(gatewayId) ?? { location_ids: [], device_ids: [] };
    scopes.set(gatewayId, s);
    return s;
  };
  let locations = db
    .selectFrom("whitelist_targets as t")
    .innerJoin("gateways as g", "g.location_id", "t.target_id")
    .select(["g.id as gateway_id", "t.target_id"])
    .where("t.whitelist_id", "=", whitelistId)
    .where("t.target_type", "=", "location");
  if (keysOnly) locations = locations.where("t.keys_only", "=", 1);
  for (const r of await locations.execute()) scopeOf(r.gateway_id).location_ids.push(r.target_id);
  let devices = db
    .selectFrom("whitelist_targets as t")
    .innerJoin("devices as d", "d.id", "t.target_id")
    .select(["d.gateway_id", "t.target_id"])
    .where("t.whitelist_id", "=", whitelistId)
    .where("t.target_type", "=", "device")
    .where("d.gateway_id", "is not", null);
  if (keysOnly) devices = devices.where("t.keys_only", "=", 1);
  for (const r of await devices.execute())
    if (r.gateway_id) scopeOf(r.gateway_id).device_ids.push(r.target_id);
  for (const s of scopes.values()) {
    s.location_ids.sort();
    s.device_ids.sort();
  }
  return scopes;
}

/** One entity as the gateway's decision needs it; built with a fixed key order so its JSON compares. */
export function toGrant(e: EntityRow, scope: KeyScope): Grant {
  return {
    card_id: e.card_id,
    whitelist_id: e.whitelist_id,
    status: e.status,
    expires_at: e.expires_at,
    is_master_key: e.is_master_key === 1,
    location_ids: scope.location_ids,
    device_ids: scope.device_ids,
  };
}

/**
 * A card's grants at one gateway through every whitelist targeting its location or devices, keys_only or
 * not: the answer to a gateway asking about a card it does not hold.
 */
export async function cardGrantsAt(db: Executor, gatewayId: string, cardId: string): Promise<Grant[]> {
  const entities = await db
    .selectFrom("whitelist_entities")
    .select(["card_id", "whitelist_id", "status", "expires_at", "is_master_key"])
    .where("card_id", "=", cardId)
    .execute();
  const grants: Grant[] = [];
  for (const e of entities) {
    const scope = (await keyScopesOf(db, e.whitelist_id, false)).get(gatewayId);
    if (scope) grants.push(toGrant(e, scope));
  }
  return grants.slice(0, 100);
}
