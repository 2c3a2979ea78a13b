import { type Kysely, type Migration, PostgresAdapter, sql } from "kysely";

/**
 * The devices' statement triggers (migration 013) lock the locations whose `data_version` they raise in
 * ascending id, before raising it. A statement that writes devices of several locations (a batch of device
 * reports, of heartbeats) took them in whatever order the plan gave, so two such statements could each
 * hold a location the other waited for. With every writer taking devices in id order first (one, for a
 * command), then locations in id order, no two wait for each other (docs/decisions/fleet-intake.md).
 * SQLite has one writer at a time: nothing to change.
 */
export const locationLockOrderMigration: Migration = {
  async up(db: Kysely<unknown>) {
    if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return;
    await sql`
      CREATE OR REPLACE FUNCTION bump_location_versions() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE ids text[];
      BEGIN
        IF TG_OP = 'INSERT' THEN
          SELECT array_agg(DISTINCT location_id) INTO ids FROM new_rows;
        ELSIF TG_OP = 'DELETE' THEN
          SELECT array_agg(DISTINCT location_id) INTO ids FROM old_rows;
        ELSE
          SELECT array_agg(location_id) INTO ids
            FROM (SELECT location_id FROM new_rows UNION SELECT location_id FROM old_rows) AS u;
        END IF;
        PERFORM 1 FROM locations WHERE id = ANY (ids) ORDER BY id FOR NO KEY UPDATE;
        UPDATE locations SET data_version = data_version + 1 WHERE id = ANY (ids);
        RETURN NULL;
      END $$`.execute(db);
  },
};
