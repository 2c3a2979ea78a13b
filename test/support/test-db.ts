import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import pg from "pg";
import { type Db, openDb, type StoreConfig } from "../../cloud/store/db.ts";

/** PostgreSQL used by the suites; CI starts the machine's server on 127.0.0.1:5432 (database `test`). */
export const TEST_PG_URL = process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";

export type TestDb = {
  db: Db;
  kind: "sqlite" | "postgres";
  /** PostgreSQL: the test's own schema, which other handles (replicas) may open too. */
  schema?: string;
  drop(): Promise<void>;
};

/**
 * A fresh, migrated store for one test: a SQLite file in a temp dir, or (TEST_DB=postgres) a schema
 * of its own in the test database, dropped afterwards.
 */
export async function openTestDb(
  kind: TestDb["kind"] = process.env.TEST_DB === "postgres" ? "postgres" : "sqlite",
): Promise<TestDb> {
  if (kind === "postgres") {
    const schema = `t_${process.pid}_${Math.random().toString(36).slice(2, 10)}`;
    const dropSchema = async () => {
      const c = new pg.Client({ connectionString: TEST_PG_URL });
      await c.connect();
      await c.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await c.end();
    };
    const db = await openDb({ kind: "postgres", url: TEST_PG_URL, schema }).catch(async (err: unknown) => {
      await dropSchema();
      throw err;
    });
    return {
      db,
      kind: "postgres",
      schema,
      async drop() {
        await db.destroy();
        await dropSchema();
      },
    };
  }
  const dir = mkdtempSync(path.join(tmpdir(), "parking-test-"));
  const db = await openDb({ kind: "sqlite", file: path.join(dir, "cloud.db") });
  return {
    db,
    kind: "sqlite",
    async drop() {
      await db.destroy();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Another handle on `store`'s PostgreSQL schema, as a second replica of the cloud opens it; its drop closes
 * this handle only (the store's own drop removes the schema).
 */
export async function openReplicaDb(store: TestDb): Promise<TestDb> {
  if (!store.schema)
    throw new Error("replicas share a PostgreSQL store: open it with openTestDb('postgres')");
  const db = await openDb({ kind: "postgres", url: TEST_PG_URL, schema: store.schema });
  return { db, kind: "postgres", schema: store.schema, drop: () => db.destroy() };
}

/** A DATABASE_URL for `store`'s schema, for a cloud process of its own (pg passes `options` at connect). */
export function replicaDatabaseUrl(store: TestDb): string {
  if (!store.schema)
    throw new Error("replicas share a PostgreSQL store: open it with openTestDb('postgres')");
  const url = new URL(TEST_PG_URL);
  url.searchParams.set("options", `-c search_path=${store.schema}`);
  return url.toString();
}

/**
 * A fresh store of `kind` migrated only up to and including `migration`, for a test of the migration after
 * it: `reopen()` opens it again and runs the migrations still pending; `drop()` removes it.
 */
export async function openTestDbAt(
  kind: TestDb["kind"],
  migration: string,
): Promise<{ db: Db; reopen(): Promise<Db>; drop(): Promise<void> }> {
  const dir = mkdtempSync(path.join(tmpdir(), "parking-test-"));
  const schema = `t_${process.pid}_${Math.random().toString(36).slice(2, 10)}`;
  const config: StoreConfig =
    kind === "postgres" ? { kind, url: TEST_PG_URL, schema } : { kind, file: path.join(dir, "cloud.db") };
  const handles: Db[] = [await openDb(config, { migrateTo: migration })];
  return {
    db: handles[0] as Db,
    async reopen() {
      const db = await openDb(config);
      handles.push(db);
      return db;
    },
    async drop() {
      for (const db of handles) await db.destroy();
      rmSync(dir, { recursive: true, force: true });
      if (kind !== "postgres") return;
      const c = new pg.Client({ connectionString: TEST_PG_URL });
      await c.connect();
      await c.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await c.end();
    },
  };
}
