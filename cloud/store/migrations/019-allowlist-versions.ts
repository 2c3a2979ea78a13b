import { type Kysely, type Migration, PostgresAdapter, sql } from "kysely";

/**
 * A location's `allowlisted` and `allowlist_ids` follow the whitelists that target it or its devices
 * (docs/decisions/locations.md), so a target added or removed raises the location's `data_version` in the
 * same transaction, by triggers, whatever writes it (the API, the manifest, another replica): the kept list
 * views see the change on the next request (cloud/locations/location-views.ts), as for migration 013.
 */
export const allowlistVersionsMigration: Migration = {
  async up(db: Kysely<unknown>) {
    if (db.getExecutor().adapter instanceof PostgresAdapter) await postgresTriggers(db);
    else await sqliteTriggers(db);
  },
};

async function postgresTriggers(db: Kysely<unknown>) {
  // Statement-level with transition tables, like the device triggers: a batch bumps each location once.
  await sql`
    CREATE FUNCTION bump_target_location_versions() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF TG_OP = 'INSERT' THEN
        UPDATE locations SET data_version = data_version + 1 WHERE id IN (
          SELECT target_id FROM new_rows WHERE target_type = 'location'
          UNION SELECT d.location_id FROM devices d JOIN new_rows n
            ON n.target_type = 'device' AND d.id = n.target_id);
      ELSIF TG_OP = 'DELETE' THEN
        UPDATE locations SET data_version = data_version + 1 WHERE id IN (
          SELECT target_id FROM old_rows WHERE target_type = 'location'
          UNION SELECT d.location_id FROM devices d JOIN old_rows o
            ON o.target_type = 'device' AND d.id = o.target_id);
      ELSE
        UPDATE locations SET data_version = data_version + 1 WHERE id IN (
          SELECT target_id FROM new_rows WHERE target_type = 'location'
          UNION SELECT target_id FROM old_rows WHERE target_type = 'location'
          UNION SELECT d.location_id FROM devices d JOIN new_rows n
            ON n.target_type = 'device' AND d.id = n.target_id
          UNION SELECT d.location_id FROM devices d JOIN old_rows o
            ON o.target_type = 'device' AND d.id = o.target_id);
      END IF;
      RETURN NULL;
    END $$`.execute(db);
  await sql`CREATE TRIGGER whitelist_targets_bump_location_ins AFTER INSERT ON whitelist_targets
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT
    EXECUTE FUNCTION bump_target_location_versions()`.execute(db);
  await sql`CREATE TRIGGER whitelist_targets_bump_location_upd AFTER UPDATE ON whitelist_targets
    REFERENCING NEW TABLE AS new_rows OLD TABLE AS old_rows FOR EACH STATEMENT
    EXECUTE FUNCTION bump_target_location_versions()`.execute(db);
  await sql`CREATE TRIGGER whitelist_targets_bump_location_del AFTER DELETE ON whitelist_targets
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT
    EXECUTE FUNCTION bump_target_location_versions()`.execute(db);
}

async function sqliteTriggers(db: Kysely<unknown>) {
  const bump = (row: "NEW" | "OLD") => `UPDATE locations SET data_version = data_version + 1 WHERE id =
    CASE ${row}.target_type WHEN 'location' THEN ${row}.target_id
      ELSE (SELECT location_id FROM devices WHERE id = ${row}.target_id) END;`;
  await sql
    .raw(`CREATE TRIGGER whitelist_targets_bump_location_ins AFTER INSERT ON whitelist_targets BEGIN
    ${bump("NEW")} END`)
    .execute(db);
  // keys_only changes do not change the allowlist; other changes (past the app) do.
  await sql
    .raw(`CREATE TRIGGER whitelist_targets_bump_location_upd AFTER UPDATE OF whitelist_id, target_type, target_id
    ON whitelist_targets BEGIN ${bump("OLD")} ${bump("NEW")} END`)
    .execute(db);
  await sql
    .raw(`CREATE TRIGGER whitelist_targets_bump_location_del AFTER DELETE ON whitelist_targets BEGIN
    ${bump("OLD")} END`)
    .execute(db);
}
