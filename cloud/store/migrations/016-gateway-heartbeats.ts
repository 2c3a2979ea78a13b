import { type Kysely, type Migration, PostgresAdapter, sql } from "kysely";

/**
 * A heartbeat writes one row, its gateway's, instead of one per device (issue 10, fleet: at 10,000
 * gateways × 16 devices, a heartbeat every 10 s each was 16,000 device rows written a second, and the
 * row locks held for it delayed commands). `gateways.heartbeat_at` is when the gateway's latest heartbeat
 * arrived; `devices.reachable` whether that heartbeat reached the device (a GUARD always is: it is the
 * gateway), and `devices.seen_at` (formerly `last_seen_at`) when the device was seen before that, kept
 * when a heartbeat finds it unreachable. A device's last-seen instant is the later of the two for a
 * reachable device, `seen_at` otherwise (cloud/devices/device-repository.ts). A heartbeat bumps the
 * data version of its gateway's location, where its devices are (the manifest declares them there), as
 * the device writes did (migration 013).
 */
export const gatewayHeartbeatsMigration: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable("gateways").addColumn("heartbeat_at", "text").execute();
    await db.schema.alterTable("devices").renameColumn("last_seen_at", "seen_at").execute();
    // A device is reachable once a heartbeat says so; a GUARD is the gateway itself.
    await db.schema
      .alterTable("devices")
      .addColumn("reachable", "integer", (c) => c.notNull().defaultTo(0))
      .execute();
    await sql`UPDATE devices SET reachable = 1 WHERE type = 'GUARD'`.execute(db);
    if (db.getExecutor().adapter instanceof PostgresAdapter) {
      await sql`
        CREATE FUNCTION bump_gateway_location_versions() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          UPDATE locations SET data_version = data_version + 1 WHERE id IN (SELECT location_id FROM new_rows);
          RETURN NULL;
        END $$`.execute(db);

      await sql`CREATE TRIGGER gateways_bump_location_upd AFTER UPDATE ON gateways
        REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT
        EXECUTE FUNCTION bump_gateway_location_versions()`.execute(db);
    } else {
      await sql`CREATE TRIGGER gateways_bump_location_upd AFTER UPDATE OF heartbeat_at ON gateways BEGIN
        UPDATE locations SET data_version = data_version + 1 WHERE id = NEW.location_id; END`.execute(db);
    }
  },
};
