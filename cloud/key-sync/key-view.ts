import type { Grant } from "../../shared/wire/messages.ts";
import { type GrantEntity, type KeySyncExecutor, keySyncRepository } from "./key-sync-repository.ts";

/** What one whitelist targets at one gateway: its location, and/or some of the devices it drives. */
export type KeyScope = { location_ids: string[]; device_ids: string[] };

/**
 * The gateways a whitelist reaches through its targets, with what it targets at each (spec: Target). Only
 * keys_only targets are synchronised to gateways; a card answered on demand may use any (`keysOnly` false).
 */
export async function keyScopesOf(
  db: KeySyncExecutor,
  whitelistId: string,
  keysOnly = true,
): Promise<Map<string, KeyScope>> {
  const scopes = new Map<string, KeyScope>();
  const scopeOf = (gatewayId: string) => {
    const s = scopes.get(gatewayId) ?? { location_ids: [], device_ids: [] };
    scopes.set(gatewayId, s);
    return s;
  };
  for (const r of await keySyncRepository(db).reachOf(whitelistId, keysOnly)) {
    const scope = scopeOf(r.gateway_id);
    (r.target_type === "location" ? scope.location_ids : scope.device_ids).push(r.target_id);
  }
  for (const s of scopes.values()) {
    s.location_ids.sort();
    s.device_ids.sort();
  }
  return scopes;
}

/** One entity as the gateway's decision needs it; built with a fixed key order so its JSON compares. */
export function toGrant(e: GrantEntity, scope: KeyScope): Grant {
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
export async function cardGrantsAt(db: KeySyncExecutor, gatewayId: string, cardId: string): Promise<Grant[]> {
  const entities = await keySyncRepository(db).entitiesOfCard(cardId);
  const grants: Grant[] = [];
  for (const e of entities) {
    const scope = (await keyScopesOf(db, e.whitelist_id, false)).get(gatewayId);
    if (scope) grants.push(toGrant(e, scope));
  }
  return grants.slice(0, 100);
}
