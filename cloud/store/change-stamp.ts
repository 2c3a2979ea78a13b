import type { Database } from "better-sqlite3";

/** A reading that differs from the last whenever the store may have changed since it was taken. */
export type ChangeStamp = () => string;

const stamps = new WeakMap<object, ChangeStamp>();

/**
 * Registers the SQLite connection behind `db` (a Kysely instance): its stamp is SQLite's own pair of
 * change counters, `PRAGMA data_version` (moves when another connection, in this process or another,
 * commits) and `total_changes()` (rows this connection has inserted, updated or deleted, triggers'
 * included, counted when each statement completes, so before its commit). Equal readings mean no row of
 * the store has changed in between; a rolled-back change still moves it, which only costs a read.
 */
export function registerSqliteStamp(db: object, sqlite: Database): void {
  const read = sqlite.prepare("SELECT data_version, total_changes() FROM pragma_data_version").raw();
  stamps.set(db, () => (read.get() as unknown[]).join(":"));
}

/**
 * The store's change stamp, or null where there is none to trust: PostgreSQL's replicas commit
 * concurrently, and no counter there is both cheap to read and free of a row every writer would lock
 * (docs/decisions/locations.md).
 */
export function changeStampOf(db: object): ChangeStamp | null {
  return stamps.get(db) ?? null;
}
