import type { Kysely, Migration } from "kysely";

/**
 * Per-gateway key views, their versioned changes, and the taps gateways report (ARCHITECTURE flows 2, 4);
 * the last connection state notified per device and the outages confirmed per location (site events).
 */
export const keySyncMigration: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable("gateway_key_versions")
      .addColumn("gateway_id", "text", (c) => c.primaryKey().references("gateways.id"))
      .addColumn("version", "integer", (c) => c.notNull())
      .addColumn("confirmed_version", "integer")
      .addColumn("confirmed_at", "text")
      .addColumn("updated_at", "text", (c) => c.notNull())
      .execute();
    await db.schema
      .createTable("gateway_grants")
      .addColumn("gateway_id", "text", (c) => c.notNull().references("gateways.id"))
      .addColumn("whitelist_id", "text", (c) => c.notNull())
      .addColumn("card_id", "text", (c) => c.notNull())
      .addColumn("grant", "text", (c) => c.notNull())
      .addPrimaryKeyConstraint("gateway_grants_pk", ["gateway_id", "whitelist_id", "card_id"])
      .execute();
    await db.schema
      .createTable("gateway_key_changes")
      .addColumn("gateway_id", "text", (c) => c.notNull().references("gateways.id"))
      .addColumn("version", "integer", (c) => c.notNull())
      .addColumn("changes", "text", (c) => c.notNull())
      .addColumn("created_at", "text", (c) => c.notNull())
      .addPrimaryKeyConstraint("gateway_key_changes_pk", ["gateway_id", "version"])
      .execute();
    await db.schema
      .createTable("access_events")
      .addColumn("gateway_id", "text", (c) => c.notNull())
      .addColumn("seq", "integer", (c) => c.notNull())
      .addColumn("operator_id", "text", (c) => c.notNull())
      .addColumn("location_id", "text", (c) => c.notNull())
      .addColumn("device_id", "text")
      .addColumn("reader", "text", (c) => c.notNull())
      .addColumn("card_id", "text", (c) => c.notNull())
      .addColumn("granted", "integer", (c) => c.notNull())
      .addColumn("action", "text", (c) => c.notNull())
      .addColumn("reason", "text", (c) => c.notNull())
      .addColumn("whitelist_id", "text")
      .addColumn("decided_by", "text", (c) => c.notNull())
      .addColumn("actuated", "integer")
      .addColumn("observed_at", "text", (c) => c.notNull())
      .addColumn("received_at", "text", (c) => c.notNull())
      .addPrimaryKeyConstraint("access_events_pk", ["gateway_id", "seq"])
      .execute();
    await db.schema
      .createIndex("access_events_device")
      .on("access_events")
      .columns(["device_id", "observed_at"])
      .execute();
    await db.schema
      .createTable("device_connections")
      .addColumn("device_id", "text", (c) => c.primaryKey().references("devices.id"))
      .addColumn("online", "integer", (c) => c.notNull())
      .addColumn("changed_at", "text", (c) => c.notNull())
      .execute();
    await db.schema
      .createTable("location_outages")
      .addColumn("location_id", "text", (c) => c.notNull().references("locations.id"))
      .addColumn("offline_since", "text", (c) => c.notNull())
      .addColumn("confirmed_at", "text", (c) => c.notNull())
      .addPrimaryKeyConstraint("location_outages_pk", ["location_id", "offline_since"])
      .execute();
    // A session identified only by an RFID card (rfid_parking) has the card as its access key, no user.
    await db.schema.alterTable("sessions").addColumn("access_key_id", "text").execute();
  },
};
