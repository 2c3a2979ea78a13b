import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import pg from "pg";
import { type Db, openDb } from "../../cloud/store/db.ts";

/** PostgreSQL used by the suites; CI starts the machine's server on 127.0.0.1:5432 (database `test`). */
export const TEST_PG_URL = process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";

export type TestDb = { db: Db; kind: "sqlite" | "postgres"; drop(): Promise<void> };

/**
 * A fresh, migrated store for one test: a SQLite file in a temp dir, or (TEST_DB=postgres) a schema
 * of its own in the test database, dropped afterwards.
 */
export async function openTestDb(): Promise<TestDb> {
  if (process.env.TEST_DB === "postgres") {
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
