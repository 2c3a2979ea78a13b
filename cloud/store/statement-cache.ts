import type { Database, Statement } from "better-sqlite3";
import type { SqliteDatabase } from "kysely";
import { LruMap } from "../auth/lru-map.ts";

/** Distinct statements kept prepared: the app issues a few hundred shapes of query. */
const CAPACITY = 1_000;
const DDL = /^\s*(create|alter|drop)\b/i;

/**
 * The SQLite database as Kysely sees it, with prepared statements reused by their SQL: Kysely prepares
 * every query afresh, and compiling a statement costs as much as running a small one. A statement busy
 * in an iteration is not shared; a schema change empties the cache, so no statement outlives its shape.
 */
export function withStatementCache(sqlite: Database): SqliteDatabase {
  const cache = new LruMap<string, Statement>(CAPACITY);
  return {
    close: () => sqlite.close(),
    prepare(sql: string) {
      if (DDL.test(sql)) {
        cache.clear();
        return sqlite.prepare(sql);
      }
      const cached = cache.get(sql);
      if (cached && !cached.busy) return cached;
      const stmt = sqlite.prepare(sql);
      cache.set(sql, stmt);
      return stmt;
    },
  };
}
