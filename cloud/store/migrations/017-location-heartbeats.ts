import { type Kysely, type Migration, PostgresAdapter, sql } from "kysely";

/**
 * A heartbeat no longer writes its location's row (issue 10, fleet). Migration 016 had it raise
 * `locations.data_version`, so a batch of heartbeats held the row locks of hundreds of locations until it
 * committed, and every command on a device there (whose writes raise the same version) waited for it:
 * at 10,000 gateways, commands' p99 was 0.4–0.9 s while heartbeats' was under 0.3 s. Now a heartbeat
 * counts in `location_heartbeats`, a narrow row of its own that only gateway writes touch; the location
 * views check it beside `data_version` (cloud/locations/location-views.ts).
 */
export const locationHeartbeatsMigration: Migration = {
  async up(db: Kysely<unknown>) {
    const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
    await db.schema
      .createTable("location_heartbeats")
      .addColumn("location_id", "text", (c) => c.primaryKey().references("locations.id"))
      .addColumn("beats", postgres ? "bigint" : "integer", (c) => c.notNull())
      .execute();
    if (postgres) {
      await sql`DROP TRIGGER gateways_bump_location_upd ON gateways`.execute(db);
      await sql`DROP FUNCTION bump_gateway_location_versions()`.execute(db);
      // Statement-level: a batch of heartbeats counts once per location, in one statement. Any write to a
      // gateway counts (a trigger with transition tables cannot name its columns): a status or map write
      // only refreshes a view that was still true.
      await sql`
        CREATE FUNCTION count_location_heartbeats() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          INSERT INTO location_heartbeats (location_id, beats)
            SELECT DISTINCT location_id, 1 FROM new_rows
            ON CONFLICT (location_id) DO UPDATE SET beats = location_heartbeats.beats + 1;
          RETURN NULL;
        END $$`.execute(db);
      await sql`CREATE TRIGGER gateways_count_location_heartbeats AFTER UPDATE ON gateways
        REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT
        EXECUTE FUNCTION count_location_heartbeats()`.execute(db);
    } else {
      await sql`DROP TRIGGER gateways_bump_location_upd`.execute(db);
      await sql`CREATE TRIGGER gateways_count_location_heartbeats AFTER UPDATE OF heartbeat_at ON gateways BEGIN
        INSERT INTO location_heartbeats (location_id, beats) VALUES (NEW.location_id, 1)
          ON CONFLICT (location_id) DO UPDATE SET beats = beats + 1; END`.execute(db);
    }
  },
};
