import type { TargetType } from "../../shared/domain/whitelist-entity.ts";
import { whitelistChanged } from "../key-sync/whitelist-changed.ts";
import type { Db } from "../store/db.ts";
import type { ManifestWhitelist } from "./whitelist-manifest.ts";

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
  const existing = await trx.selectFrom("whitelists").selectAll().where("id", "=", l.id).executeTakeFirst();
  if (!existing) {
    await trx
      .insertInto("whitelists")
      .values({
        id: l.id,
        operator_id: at.operatorId,
        name: l.name,
        description: l.description,
        created_at: at.ts,
        updated_at: at.ts,
      })
      .execute();
    count.created++;
    return;
  }
  // Its cards belong to that operator's integrators.
  if (existing.operator_id !== at.operatorId)
    throw new Error(`whitelist ${l.id}: the id belongs to another operator's whitelist`);
  if (existing.name === l.name && existing.description === l.description) return;
  await trx
    .updateTable("whitelists")
    .set({ name: l.name, description: l.description, updated_at: at.ts })
    .where("id", "=", l.id)
    .execute();
  count.updated++;
}

async function upsertTarget(
  trx: Db,
  at: { operatorId: string; ts: string; locationIds: ReadonlyMap<string, string> },
  l: ManifestWhitelist,
  t: ManifestWhitelist["targets"][number],
  count: Count,
) {
  const locationId = at.locationIds.get(t.location);
  if (!locationId) throw new Error(`whitelist ${l.id}: no location with code ${t.location}`);
  let type: TargetType = "location";
  let id = locationId;
  if (t.device !== undefined) {
    const device = await trx
      .selectFrom("devices")
      .select("id")
      .where("location_id", "=", locationId)
      .where("alias", "=", t.device)
      .executeTakeFirst();
    if (!device) throw new Error(`whitelist ${l.id}: no device ${t.device} at location ${t.location}`);
    type = "device";
    id = device.id;
  }
  const keysOnly = l.keys_only ? 1 : 0;
  const existing = await trx
    .selectFrom("whitelist_targets")
    .select("keys_only")
    .where("whitelist_id", "=", l.id)
    .where("target_type", "=", type)
    .where("target_id", "=", id)
    .executeTakeFirst();
  if (!existing) {
    await trx
      .insertInto("whitelist_targets")
      .values({
        whitelist_id: l.id,
        target_type: type,
        target_id: id,
        keys_only: keysOnly,
        created_at: at.ts,
      })
      .execute();
    count.created++;
    return;
  }
  if (existing.keys_only === keysOnly) return;
  await trx
    .updateTable("whitelist_targets")
    .set({ keys_only: keysOnly })
    .where("whitelist_id", "=", l.id)
    .where("target_type", "=", type)
    .where("target_id", "=", id)
    .execute();
  count.updated++;
}

async function upsertEntity(
  trx: Db,
  ts: string,
  whitelistId: string,
  e: ManifestWhitelist["entities"][number],
  count: Count,
) {
  const record = {
    status: e.status,
    expires_at: e.expires_at ? new Date(e.expires_at).toISOString() : null,
    is_master_key: e.is_master_key ? 1 : 0,
    comment: e.comment,
  };
  const existing = await trx
    .selectFrom("whitelist_entities")
    .select(["status", "expires_at", "is_master_key", "comment"])
    .where("whitelist_id", "=", whitelistId)
    .where("card_id", "=", e.id)
    .executeTakeFirst();
  if (!existing) {
    await trx
      .insertInto("whitelist_entities")
      .values({ whitelist_id: whitelistId, card_id: e.id, ...record, created_at: ts, updated_at: ts })
      .execute();
    count.created++;
    return;
  }
  const same = (Object.keys(record) as (keyof typeof record)[]).every((k) => existing[k] === record[k]);
  if (same) return;
  await trx
    .updateTable("whitelist_entities")
    .set({ ...record, updated_at: ts })
    .where("whitelist_id", "=", whitelistId)
    .where("card_id", "=", e.id)
    .execute();
  count.updated++;
}
