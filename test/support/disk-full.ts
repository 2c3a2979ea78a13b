import Database from "better-sqlite3";

type Method = (...args: unknown[]) => unknown;
type Db = Database.Database;
type Statement = { readonly: boolean; source: string; database: Db };

/**
 * Full disks for SQLite files, as the run decides. While a file is full, a statement (or `exec`) that
 * changes rows fails with SQLITE_FULL, as SQLite answers when the pages of a change cannot be written, and
 * changes nothing; one that changes nothing (a DELETE that matches no row), reads and pragmas go on. Each
 * write runs in a savepoint that is rolled back when it changed rows. better-sqlite3's own prototypes are
 * wrapped for the run, so the cloud's and the gateways' stores run their production code and meet the
 * error where a real disk gives it.
 */
export function installDiskFaults() {
  const full = new Set<string>();
  const probe = new Database(":memory:");
  const statement = Object.getPrototypeOf(probe.prepare("SELECT 1")) as Record<string, Method>;
  const database = Database.prototype as unknown as Record<string, Method>;
  probe.close();
  const originalExec = database.exec as Method;
  const exec = (db: Db, sql: string) => originalExec.call(db, sql);
  const changes = (db: Db) => (db.prepare("SELECT total_changes() AS n").get() as { n: number }).n;
  const saved: [Record<string, Method>, string, Method][] = [];

  /** Runs `write` on a full disk: an error when it changed rows (rolled back), else its result. */
  function onFullDisk(db: Db, write: () => unknown): unknown {
    const before = changes(db);
    exec(db, "SAVEPOINT disk_full");
    let out: unknown;
    try {
      out = write();
    } catch (err) {
      exec(db, "ROLLBACK TO disk_full; RELEASE disk_full");
      throw err;
    }
    if (changes(db) === before) {
      exec(db, "RELEASE disk_full");
      return out;
    }
    exec(db, "ROLLBACK TO disk_full; RELEASE disk_full");
    throw Object.assign(new Error("database or disk is full"), { code: "SQLITE_FULL" });
  }

  const wrap = (target: Record<string, Method>, key: string, dbOf: (self: unknown) => Db | null) => {
    const original = target[key] as Method;
    saved.push([target, key, original]);
    target[key] = function (this: unknown, ...args: unknown[]) {
      const db = dbOf(this);
      if (db === null || !full.has(db.name)) return original.apply(this, args);
      return onFullDisk(db, () => original.apply(this, args));
    };
  };
  const writer = (s: Statement) => (s.readonly || /^\s*PRAGMA/i.test(s.source) ? null : s.database);
  for (const key of ["run", "get", "all"]) wrap(statement, key, (s) => writer(s as Statement));
  wrap(database, "exec", (db) => db as Db);

  return {
    /** The file's disk is full (true) or has room again (false). */
    set(file: string, isFull: boolean): void {
      if (isFull) full.add(file);
      else full.delete(file);
    },
    uninstall(): void {
      for (const [target, key, original] of saved) target[key] = original;
      full.clear();
    },
  };
}

export type DiskFaults = ReturnType<typeof installDiskFaults>;
