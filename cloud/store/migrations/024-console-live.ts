import type { Kysely, Migration } from "kysely";

/**
 * The console's live stream (cloud/console/live-watch.ts) asks, every quarter second and per operator with an
 * open stream, which rows of a topic changed in the last seconds: each index leads with the operator and the
 * time of the row's last change, so that question reads a short range of the index, never the table.
 * The audit log's (operator_id, at, id) index from 023 already serves it.
 */
export const consoleLiveMigration: Migration = {
  async up(db: Kysely<unknown>) {
    for (const table of ["alarms", "sessions", "payments", "commands"]) {
      await db.schema
        .createIndex(`${table}_operator_updated`)
        .on(table)
        .columns(["operator_id", "updated_at"])
        .execute();
    }
  },
};
