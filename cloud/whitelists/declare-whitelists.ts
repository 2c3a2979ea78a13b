import type { TargetType } from "../../shared/domain/whitelist-entity.ts";
import { whitelistChanged } from "../key-sync/whitelist-changed.ts";
import type { Db } from "../store/db.ts";
import type { ManifestWhitelist } from "./whitelist-manifest.ts";
import { whitelistRepository } from "./whitelist-repository.ts";

type Count = { created: number; updated: number };

/**
 * Makes an operator's whitelists what the site manifest declares (inside apply's transaction): each
 * whitelist's name and description, its targets with the declared keys_only, and its declared cards are
 * upserted. Nothing is deleted: targets and cards added through the API stay, and so do whitelists the
 * manifest no longer names. A whitelist whose rows changed is handed to key sync ("all" of it); an
 * unchanged one writes nothing. Returns the counts and the gateways whose keys changed.
 */
export async function declareWhitelists(
  trx: Db,
  at: { operatorId: string; ts: string; now: Date; locationIds: ReadonlyMap<string, string> },
  lists: readonly ManifestWhitelist[],
): Promise<Count & { gateways: string[] }> {
  const count: Count = { created: 0, updated: 0 };
  const gateways = new Set<string>();
  for (const l of lists) {
    const before = count.created + count.updated;
    await upsertWhitelist(trx, at, l, count);
    for (const t of l.targets) await upsertTarget(trx, at, l, t, count);
    for (const e of l.entities) await upsertEntity(trx, at.ts, l.id, e, count);
    if (count.created + count.updated === before) continue;
    for (const g of await whitelistChanged(trx, { whitelistId: l.id, cardIds: "all" }, at.now))
      gateways.add(g);
  }
  return { ...count, gateways: [...gateways].sort() };
}

async function upsertWhitelist(
  trx: Db,
  at: { operatorId: string; ts: string },
  l: ManifestWhitelist,
  count: Count,
) {
  const lists = whitelistRepository(trx);
  const existing = await lists.find(l.id);
  if (!existing) {
    await lists.insert({
      id: l.id,
      operator_id: at.operatorId,
      name: l.name,
      description: l.description,
      created_at: at.ts,
      updated_at: at.ts,
    });
    count.created++;
    return;
  }
  // Its cards belong to that operator's integrators.
  if (existing.operator_id !== at.operatorId)
    throw new Error(`whitelist ${l.id}: the id belongs to another operator's whitelist`);
  if (existing.name === l.name && existing.description === l.description) return;
  await lists.describe(l.id, { name: l.name, description: l.description, updated_at: at.ts });
  count.updated++;
}

async function upsertTarget(
  trx: Db,
  at: { operatorId: string; ts: string; locationIds: ReadonlyMap<string, string> },
  l: ManifestWhitelist,
  t: ManifestWhitelist["targets"][number],
  count: Count,
) {
  const lists = whitelistRepository(trx);
  const locationId = at.locationIds.get(t.location);
  if (!locationId) throw new Error(`whitelist ${l.id}: no location with code ${t.location}`);
  let type: TargetType = "location";
  let id = locationId;
  if (t.device !== undefined) {
    const deviceId = await lists.deviceIdByAlias(locationId, t.device);
    if (!deviceId) throw new Error(`whitelist ${l.id}: no device ${t.device} at location ${t.location}`);
    type = "device";
    id = deviceId;
  }
  const keysOnly = l.keys_only ? 1 : 0;
  const key = { whitelistId: l.id, type, id };
  const existing = await lists.findTarget(key);
  if (!existing) {
    await lists.insertTarget(key, keysOnly, at.ts);
    count.created++;
    return;
  }
  if (existing.keys_only === keysOnly) return;
  await lists.setKeysOnly(key, keysOnly);
  count.updated++;
}

async function upsertEntity(
  trx: Db,
  ts: string,
  whitelistId: string,
  e: ManifestWhitelist["entities"][number],
  count: Count,
) {
  const lists = whitelistRepository(trx);
  const record = {
    status: e.status,
    expires_at: e.expires_at ? new Date(e.expires_at).toISOString() : null,
    is_master_key: e.is_master_key ? 1 : 0,
    comment: e.comment,
  };
  const existing = await lists.findEntity(whitelistId, e.id);
  if (!existing) {
    await lists.insertEntity({
      whitelist_id: whitelistId,
      card_id: e.id,
      ...record,
      created_at: ts,
      updated_at: ts,
    });
    count.created++;
    return;
  }
  const same = (Object.keys(record) as (keyof typeof record)[]).every((k) => existing[k] === record[k]);
  if (same) return;
  await lists.updateEntity(whitelistId, e.id, { ...record, updated_at: ts });
  count.updated++;
}
