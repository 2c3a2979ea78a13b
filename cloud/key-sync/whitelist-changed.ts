import type { Grant, GrantKey } from "../../shared/wire/messages.ts";
import { toJson } from "../store/json-column.ts";
import type { KeyChangeSet } from "../store/tables/key-sync-tables.ts";
import { type KeySyncExecutor, keySyncRepository } from "./key-sync-repository.ts";
import { type KeyScope, keyScopesOf, toGrant } from "./key-view.ts";

/** What changed in one whitelist: some of its cards, or all of it (its targets, or the list itself). */
export type KeyChange = { whitelistId: string; cardIds: string[] | "all" };

/**
 * Records a whitelist change in the key views of the gateways it concerns (ARCHITECTURE flow 4). Called
 * inside the transaction that changed the whitelist rows, so the change and its new key versions commit
 * together; returns the gateways whose key set changed, for the caller to tell `keysChanged` after commit.
 * Each gateway whose view changed gets one new version whose change set is exactly the difference.
 */
export async function whitelistChanged(
  trx: KeySyncExecutor,
  change: KeyChange,
  now: Date,
): Promise<string[]> {
  const scopes = await keyScopesOf(trx, change.whitelistId);
  const holders = await keySyncRepository(trx).holdersOf(change.whitelistId);
  const gateways = new Set([...scopes.keys(), ...holders]);
  const changed: string[] = [];
  for (const gatewayId of [...gateways].sort()) {
    const diff = await diffView(trx, gatewayId, change, scopes.get(gatewayId) ?? null);
    if (diff.upserts.length === 0 && diff.removals.length === 0) continue;
    await recordVersion(trx, gatewayId, change.whitelistId, diff, now);
    changed.push(gatewayId);
  }
  return changed;
}

async function diffView(trx: KeySyncExecutor, gatewayId: string, change: KeyChange, scope: KeyScope | null) {
  const keys = keySyncRepository(trx);
  const cards = change.cardIds === "all" ? null : [...new Set(change.cardIds)];
  const desired = new Map<string, Grant>();
  if (scope)
    for (const e of await keys.entitiesOf(change.whitelistId, cards))
      desired.set(e.card_id, toGrant(e, scope));
  const current = await keys.heldGrantJson(gatewayId, change.whitelistId, cards);
  const upserts = [...desired.values()].filter((g) => current.get(g.card_id) !== toJson(g));
  const removals: GrantKey[] = [...current.keys()]
    .filter((card) => !desired.has(card))
    .map((card_id) => ({ card_id, whitelist_id: change.whitelistId }));
  return { upserts, removals };
}

/** Bumps the gateway's version and applies the change set to its view, all in the caller's transaction. */
async function recordVersion(
  trx: KeySyncExecutor,
  gatewayId: string,
  whitelistId: string,
  diff: KeyChangeSet,
  now: Date,
) {
  const keys = keySyncRepository(trx);
  const at = now.toISOString();
  const version = await keys.nextVersion(gatewayId, at);
  await keys.recordChanges(gatewayId, version, diff, at);
  await keys.dropGrants(
    gatewayId,
    whitelistId,
    diff.removals.map((r) => r.card_id),
  );
  await keys.putGrants(gatewayId, diff.upserts);
}
