import type { Grant, GrantKey } from "../../shared/wire/messages.ts";
import type { Db } from "../store/db.ts";
import { toJson } from "../store/json-column.ts";
import { type KeyScope, keyScopesOf, toGrant } from "./key-view.ts";

/** What changed in one whitelist: some of its cards, or all of it (its targets, or the list itself). */
export type KeyChange = { whitelistId: string; cardIds: string[] | "all" };

type Writer = Pick<Db, "selectFrom" | "updateTable" | "insertInto" | "deleteFrom">;

/** IN lists stay well under both stores' bound-parameter limits. */
const CHUNK = 500;

/**
 * Records a whitelist change in the key views of the gateways it concerns (ARCHITECTURE flow 4). Called
 * inside the transaction that changed the whitelist rows, so the change and its new key versions commit
 * together; returns the gateways whose key set changed, for the caller to tell `keysChanged` after commit.
 * Each gateway whose view changed gets one new version whose change set is exactly the difference.
 */
export async function whitelistChanged(trx: Writer, change: KeyChange, now: Date): Promise<string[]> {
  const scopes = await keyScopesOf(trx, change.whitelistId);
  const holders = await trx
    .selectFrom("gateway_grants")
    .select("gateway_id")
    .distinct()
    .where("whitelist_id", "=", change.whitelistId)
    .execute();
  const gateways = new Set([...scopes.keys(), ...holders.map((h) => h.gateway_id)]);
  const changed: string[] = [];
  for (const gatewayId of [...gateways].sort()) {
    const diff = await diffView(trx, gatewayId, change, scopes.get(gatewayId) ?? null);
    if (diff.upserts.length === 0 && diff.removals.length === 0) continue;
    await recordVersion(trx, gatewayId, change.whitelistId, diff, now);
    changed.push(gatewayId);
  }
  return changed;
}

async function diffView(trx: Writer, gatewayId: string, change: KeyChange, scope: KeyScope | null) {
  const cards = change.cardIds === "all" ? null : [...new Set(change.cardIds)];
  const desired = new Map<string, Grant>();
  if (scope) {
    for (const part of cards ? chunks(cards) : [null]) {
      let q = trx
        .selectFrom("whitelist_entities")
        .select(["card_id", "whitelist_id", "status", "expires_at", "is_master_key"])
        .where("whitelist_id", "=", change.whitelistId);
      if (part) q = q.where("card_id", "in", part);
      for (const e of await q.execute()) desired.set(e.card_id, toGrant(e, scope));
    }
  }
  const current = new Map<string, string>();
  for (const part of cards ? chunks(cards) : [null]) {
    let q = trx
      .selectFrom("gateway_grants")
      .select(["card_id", "grant"])
      .where("gateway_id", "=", gatewayId)
      .where("whitelist_id", "=", change.whitelistId);
    if (part) q = q.where("card_id", "in", part);
    for (const g of await q.execute()) current.set(g.card_id, g.grant);
  }
  const upserts = [...desired.values()].filter((g) => current.get(g.card_id) !== toJson(g));
  const removals: GrantKey[] = [...current.keys()]
    .filter((card) => !desired.has(card))
    .map((card_id) => ({ card_id, whitelist_id: change.whitelistId }));
  return { upserts, removals };
}

/** Bumps the gateway's version and applies the change set to its view, all in the caller's transaction. */
async function recordVersion(
  trx: Writer,
  gatewayId: string,
  whitelistId: string,
  diff: { upserts: Grant[]; removals: GrantKey[] },
  now: Date,
) {
  const at = now.toISOString();
  await trx
    .insertInto("gateway_key_versions")
    .values({
      gateway_id: gatewayId,
      version: 0,
      confirmed_version: null,
      confirmed_at: null,
      updated_at: at,
    })
    .onConflict((oc) => oc.column("gateway_id").doNothing())
    .execute();
  // One statement reads and bumps: concurrent writers on PostgreSQL queue on the row instead of racing.
  const { version } = await trx
    .updateTable("gateway_key_versions")
    .set((eb) => ({ version: eb("version", "+", 1), updated_at: at }))
    .where("gateway_id", "=", gatewayId)
    .returning("version")
    .executeTakeFirstOrThrow();
  await trx
    .insertInto("gateway_key_changes")
    .values({ gateway_id: gatewayId, version, changes: toJson(diff), created_at: at })
    .execute();
  for (const part of chunks(diff.removals.map((r) => r.card_id)))
    await trx
      .deleteFrom("gateway_grants")
      .where("gateway_id", "=", gatewayId)
      .where("whitelist_id", "=", whitelistId)
      .where("card_id", "in", part)
      .execute();
  for (const part of chunks(diff.upserts, 200))
    await trx
      .insertInto("gateway_grants")
      .values(
        part.map((g) => ({
          gateway_id: gatewayId,
          whitelist_id: g.whitelist_id,
          card_id: g.card_id,
          grant: toJson(g),
        })),
      )
      .onConflict((oc) =>
        oc
          .columns(["gateway_id", "whitelist_id", "card_id"])
          .doUpdateSet((eb) => ({ grant: eb.ref("excluded.grant") })),
      )
      .execute();
}

function chunks<T>(items: T[], size = CHUNK): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}
