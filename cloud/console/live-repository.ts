import { sql } from "kysely";
import type { Executor } from "../store/db.ts";

/** The per-operator topics of the console's live stream, beside each location's own `location` event. */
export const LIVE_TOPICS = ["alarms", "sessions", "commands", "audit"] as const;
export type LiveTopic = (typeof LIVE_TOPICS)[number];

/** How many of a topic's recent changes one poll reads at most (a burst beyond it still differs). */
const RECENT_LIMIT = 500;

/**
 * The cheap watermarks the live watch polls (cloud/console/live-watch.ts); each reads a short range of an
 * index (migration 024). A topic's watermark is the set of rows changed since `since`, each named with what
 * marks its change (`id:version`, `id:updated_at:status`…): a change appears as a key never seen before,
 * whatever order transactions commit in, which a max(updated_at) would miss.
 */
export function liveRepository(db: Executor) {
  return {
    /** Every operator's id: what a superadmin's stream watches. */
    async operatorIds(): Promise<string[]> {
      const rows = await db.selectFrom("operators").select("id").execute();
      return rows.map((r) => r.id);
    },

    /** Each location of the operator with its data_version (which triggers raise on every change of it). */
    async locationVersions(operatorId: string): Promise<Map<string, number>> {
      const rows = await db
        .selectFrom("locations")
        .select(["id", sql<string>`cast(data_version as text)`.as("data_version")])
        .where("operator_id", "=", operatorId)
        .execute();
      // Not in the table types (only triggers write it); read as text, as PostgreSQL answers a bigint.
      return new Map(rows.map((r) => [r.id, Number(r.data_version)]));
    },

    /** The keys of the operator's rows of `topic` changed at `since` or later. */
    recentChanges(topic: LiveTopic, operatorId: string, since: string): Promise<string[]> {
      switch (topic) {
        case "alarms":
          return keys(
            db
              .selectFrom("alarms")
              .select(["id", "version"])
              .where("operator_id", "=", operatorId)
              .where("updated_at", ">=", since)
              .orderBy("updated_at", "desc")
              .limit(RECENT_LIMIT)
              .execute(),
            (r) => `${r.id}:${r.version}`,
          );
        case "sessions":
          return Promise.all([
            keys(recent(db, "sessions", operatorId, since), (r) => `s:${r.id}:${r.updated_at}:${r.status}`),
            keys(recent(db, "payments", operatorId, since), (r) => `p:${r.id}:${r.updated_at}:${r.status}`),
          ]).then(([s, p]) => [...s, ...p]);
        case "commands":
          return keys(
            db
              .selectFrom("commands")
              .select(["id", "updated_at", "state_value"])
              .where("operator_id", "=", operatorId)
              .where("updated_at", ">=", since)
              .orderBy("updated_at", "desc")
              .limit(RECENT_LIMIT)
              .execute(),
            (r) => `${r.id}:${r.updated_at}:${r.state_value}`,
          );
        case "audit":
          // Append-only: a new entry is a new id.
          return keys(
            db
              .selectFrom("audit_log")
              .select("id")
              .where("operator_id", "=", operatorId)
              .where("at", ">=", since)
              .orderBy("at", "desc")
              .limit(RECENT_LIMIT)
              .execute(),
            (r) => r.id,
          );
      }
    },
  };
}

function recent(db: Executor, table: "sessions" | "payments", operatorId: string, since: string) {
  return db
    .selectFrom(table)
    .select(["id", "updated_at", "status"])
    .where("operator_id", "=", operatorId)
    .where("updated_at", ">=", since)
    .orderBy("updated_at", "desc")
    .limit(RECENT_LIMIT)
    .execute();
}

async function keys<R>(rows: Promise<R[]>, key: (r: R) => string): Promise<string[]> {
  return (await rows).map(key);
}

export type LiveRepository = ReturnType<typeof liveRepository>;
