import { type Kysely, type Migration, PostgresAdapter, sql } from "kysely";

/**
 * `locations.data_version` rises with every change to a location or to any of its devices, in the same
 * transaction, by triggers: whatever writes (a gateway report, a command, the manifest, another replica),
 * a cached view of the location is stale exactly when its version is (cloud/locations/location-views.ts).
 */
export const locationDataVersionMigration: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .alterTable("locations")
      .addColumn("data_version", "bigint", (c) => c.notNull().defaultTo(0))
      .execute();
    // Lists read every location of an operator in code order: from the index, with no sort.
    await db.schema
      .createIndex("locations_operator_code")
      .on("locations")
      .columns(["operator_id", "code", "id"])
      .execute();
    if (db.getExecutor().adapter instanceof PostgresAdapter) await postgresTriggers(db);
    else await sqliteTriggers(db);
  },
};

async function postgresTriggers(db: Kysely<unknown>) {
  // Statement-level with transition tables: a heartbeat that marks 16 devices seen bumps its location once.
  await sql`
    CREATE FUNCTION bump_location_versions() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF TG_OP = 'INSERT' THEN
        UPDATE locations SET data_version = data_version + 1
          WHERE id IN (SELECT location_id FROM new_rows);
      ELSIF TG_OP = 'DELETE' THEN
        UPDATE locations SET data_version = data_version + 1
          WHERE id IN (SELECT location_id FROM old_rows);
      ELSE
        UPDATE locations SET data_version = data_version + 1
          WHERE id IN (SELECT location_id FROM new_rows UNION SELECT location_id FROM old_rows);
      END IF;
      RETURN NULL;
    END $$`.execute(db);
  await sql`CREATE TRIGGER devices_bump_location_ins AFTER INSERT ON devices
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION bump_location_versions()`.execute(
    db,
  );
  await sql`CREATE TRIGGER devices_bump_location_upd AFTER UPDATE ON devices
    REFERENCING NEW TABLE AS new_rows OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION bump_location_versions()`.execute(db);
  await sql`CREATE TRIGGER devices_bump_location_del AFTER DELETE ON devices
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION bump_location_versions()`.execute(
    db,
  );
  // A write to the location itself that leaves data_version alone bumps it on the way in.
  await sql`
    CREATE FUNCTION bump_own_location_version() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF NEW.data_version = OLD.data_version THEN NEW.data_version := OLD.data_version + 1; END IF;
      RETURN NEW;
    END $$`.execute(db);
  await sql`CREATE TRIGGER locations_bump_version BEFORE UPDATE ON locations
    FOR EACH ROW EXECUTE FUNCTION bump_own_location_version()`.execute(db);
}

async function sqliteTriggers(db: Kysely<unknown>) {
  await sql`CREATE TRIGGER devices_bump_location_ins AFTER INSERT ON devices BEGIN
    UPDATE locations SET data_version = data_version + 1 WHERE id = NEW.location_id; END`.execute(db);
  await sql`CREATE TRIGGER devices_bump_location_upd AFTER UPDATE ON devices BEGIN
    UPDATE locations SET data_version = data_version + 1 WHERE id IN (NEW.location_id, OLD.location_id);
    END`.execute(db);
  await sql`CREATE TRIGGER devices_bump_location_del AFTER DELETE ON devices BEGIN
    UPDATE locations SET data_version = data_version + 1 WHERE id = OLD.location_id; END`.execute(db);
  // The WHEN keeps the device triggers' own bump (and this one's) from bumping twice.
  await sql`CREATE TRIGGER locations_bump_version AFTER UPDATE ON locations
    WHEN NEW.data_version = OLD.data_version BEGIN
    UPDATE locations SET data_version = OLD.data_version + 1 WHERE id = NEW.id; END`.execute(db);
}
