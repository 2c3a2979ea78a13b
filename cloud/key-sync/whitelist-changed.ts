import type { Executor } from "../store/db.ts";

/** What changed in one whitelist: some of its cards, or all of it (its targets, or the list itself). */
export type KeyChange = { whitelistId: string; cardIds: string[] | "all" };

/**
 * Records a whitelist change in the key views of the gateways it concerns (ARCHITECTURE flow 4). Called
 * inside the transaction that changed the whitelist rows, so the change and its new key versions commit
 * together; returns the gateways whose key set changed, for the caller to tell `keysChanged` after commit.
 */
export function whitelistChanged(_trx: Executor, _change: KeyChange, _now: Date): Promise<string[]> {
  return Promise.resolve([]);
}
