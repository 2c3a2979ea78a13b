import { closeSync, mkdirSync, openSync } from "node:fs";
import path from "node:path";
import BetterSqlite3 from "better-sqlite3";
import {
  CompiledQuery,
  type DatabaseConnection,
  Kysely,
  Migrator,
  PostgresAdapter,
  SqliteDialect,
} from "kysely";
import pg from "pg";
import { assertSqliteRuntime } from "../../shared/node/sqlite-runtime.ts";
import { registerSqliteStamp } from "./change-stamp.ts";
import { migrationProvider } from "./migrations.ts";
import { OwnSchemaPostgresDialect } from "./own-schema-introspector.ts";
import type { Database } from "./schema.ts";
import { withStatementCache } from "./statement-cache.ts";

export type Db = Kysely<Database>;

/** Whether `db` (or a transaction of it) is on PostgreSQL: where a statement is written for each store. */
export const isPostgres = (db: Db): boolean => db.getExecutor().adapter instanceof PostgresAdapter;

/** The store or one of its transactions: what a repository needs to read and write. */
export type Executor = Pick<Db, "selectFrom" | "updateTable" | "insertInto" | "deleteFrom">;

export type StoreConfig =
  | { kind: "sqlite"; file: string }
  | {
      kind: "postgres";
      url: string /** schema to use (created if missing); default public */;
      schema?: string;
    };

/**
 * Opens the store named by config and runs pending migrations (up to and including `migrateTo` when given:
 * a test of a migration starts from the schema before it). On PostgreSQL `poolMax` connections at most
 * (default 10).
 */
export async function openDb(
  config: StoreConfig,
  opts: { migrateTo?: string; poolMax?: number } = {},
): Promise<Db> {
  const db =
    config.kind === "sqlite"
      ? openSqlite(config.file)
      : await openPostgres(config.url, config.schema, opts.poolMax ?? 10);
  const schema = config.kind === "postgres" ? config.schema : undefined;
  // The migration bookkeeping lives in the store's own schema, so several schemas never share it.
  const migrator = new Migrator({
    db,
    provider: migrationProvider,
    ...(schema ? { migrationTableSchema: schema } : {}),
  });
  const { error, results } = opts.migrateTo
    ? await migrator.migrateTo(opts.migrateTo)
    : await migrator.migrateToLatest();
  const failed = results?.find((r) => r.status === "Error");
  if (error || failed) {
    await db.destroy();
    throw new Error(
      `database migration failed${failed ? ` at ${failed.migrationName}` : ""}: ${String(error)}`,
    );
  }
  return db;
}

function openSqlite(file: string): Db {
  assertSqliteRuntime();
  if (file !== ":memory:") {
    // Owner-only: the store holds secret hashes. SQLite gives its -wal and -shm files the main file's mode.
    mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
    closeSync(openSync(file, "a", 0o600));
  }
  const sqlite = new BetterSqlite3(file);
  sqlite.pragma("journal_mode = WAL");
  sqlite.pragma("synchronous = NORMAL");
  sqlite.pragma("foreign_keys = ON");
  sqlite.pragma("busy_timeout = 5000");
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: withStatementCache(sqlite) }) });
  registerSqliteStamp(db, sqlite);
  return db;
}

/**
 * Another pool on a PostgreSQL store already opened (and migrated) by `openDb`, so one kind of work never
 * waits for connections held by another (the cloud's gateway intake beside its HTTP requests).
 * `durable: false` commits without waiting for the WAL flush: for writes whose loss in a database crash
 * costs nothing (heartbeats).
 */
export function openPostgresPool(
  config: Extract<StoreConfig, { kind: "postgres" }>,
  poolMax: number,
  opts: { durable?: boolean } = {},
): Promise<Db> {
  return openPostgres(config.url, config.schema, poolMax, opts.durable ?? true);
}

async function openPostgres(
  url: string,
  schema: string | undefined,
  poolMax: number,
  durable = true,
): Promise<Db> {
  if (schema) {
    if (!/^[a-z_][a-z0-9_]{0,62}$/.test(schema)) throw new Error(`invalid PostgreSQL schema name: ${schema}`);
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    try {
      await admin.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
    } finally {
      await admin.end();
    }
  }
  const pool = new pg.Pool({
    connectionString: url,
    max: poolMax,
    ...(schema ? { options: `-c search_path=${schema}` } : {}),
  });
  // Set on each connection, not in its start-up options: those of a DATABASE_URL (`?options=…`) replace
  // the pool's, and the setting was silently lost.
  const onCreateConnection = durable
    ? undefined
    : async (c: DatabaseConnection) => {
        await c.executeQuery(CompiledQuery.raw("SET synchronous_commit TO off"));
      };
  return new Kysely<Database>({ dialect: new OwnSchemaPostgresDialect({ pool, onCreateConnection }) });
}
