import type { Kysely, Migration } from "kysely";

/** Sessions, their immutable events, payments and price lists. */
export const sessionsMigration: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable("price_lists")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("operator_id", "text", (c) => c.notNull().references("operators.id"))
      .addColumn("code", "text", (c) => c.notNull())
      .addColumn("name", "text", (c) => c.notNull())
      .addColumn("currency", "text", (c) => c.notNull())
      .addColumn("free_minutes", "integer", (c) => c.notNull())
      .addColumn("period_minutes", "integer", (c) => c.notNull())
      .addColumn("price_per_period", "text", (c) => c.notNull())
      .addColumn("max_fee", "text")
      .addColumn("created_at", "text", (c) => c.notNull())
      .addColumn("updated_at", "text", (c) => c.notNull())
      .addUniqueConstraint("price_lists_operator_code", ["operator_id", "code"])
      .execute();
    await db.schema
      .createTable("sessions")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("operator_id", "text", (c) => c.notNull().references("operators.id"))
      .addColumn("user_id", "text", (c) => c.notNull())
      .addColumn("location_id", "text", (c) => c.notNull().references("locations.id"))
      .addColumn("device_id", "text", (c) => c.notNull().references("devices.id"))
      .addColumn("price_list_id", "text", (c) => c.references("price_lists.id"))
      .addColumn("status", "text", (c) => c.notNull())
      .addColumn("status_at", "text", (c) => c.notNull())
      .addColumn("booked_time", "text")
      .addColumn("booked_until_time", "text")
      .addColumn("start_time", "text")
      .addColumn("end_time", "text")
      .addColumn("command_id", "text")
      .addColumn("ended_by", "text")
      .addColumn("fee_currency", "text")
      .addColumn("fee_value", "text")
      .addColumn("created_at", "text", (c) => c.notNull())
      .addColumn("updated_at", "text", (c) => c.notNull())
      .execute();
    // The list's keyset order, per operator and per rider.
    await db.schema
      .createIndex("sessions_operator_order")
      .on("sessions")
      .columns(["operator_id", "created_at", "id"])
      .execute();
    await db.schema
      .createIndex("sessions_user_order")
      .on("sessions")
      .columns(["user_id", "created_at", "id"])
      .execute();
    await db.schema.createIndex("sessions_device").on("sessions").columns(["device_id", "status"]).execute();
    await db.schema.createIndex("sessions_command").on("sessions").column("command_id").execute();
    await db.schema
      .createTable("session_events")
      .addColumn("session_id", "text", (c) => c.notNull().references("sessions.id"))
      .addColumn("seq", "integer", (c) => c.notNull())
      .addColumn("name", "text", (c) => c.notNull())
      .addColumn("occurred_at", "text", (c) => c.notNull())
      .addColumn("booked_until", "text")
      .addPrimaryKeyConstraint("session_events_pk", ["session_id", "seq"])
      .execute();
    await db.schema
      .createTable("payments")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("operator_id", "text", (c) => c.notNull().references("operators.id"))
      .addColumn("session_id", "text", (c) => c.notNull().unique().references("sessions.id"))
      .addColumn("provider", "text", (c) => c.notNull())
      .addColumn("status", "text", (c) => c.notNull())
      .addColumn("created_at", "text", (c) => c.notNull())
      .addColumn("updated_at", "text", (c) => c.notNull())
      .execute();
    await db.schema
      .createTable("payment_changes")
      .addColumn("payment_id", "text", (c) => c.notNull().references("payments.id"))
      .addColumn("seq", "integer", (c) => c.notNull())
      .addColumn("from_status", "text")
      .addColumn("to_status", "text", (c) => c.notNull())
      .addColumn("actor", "text", (c) => c.notNull())
      .addColumn("changed_at", "text", (c) => c.notNull())
      .addPrimaryKeyConstraint("payment_changes_pk", ["payment_id", "seq"])
      .execute();
  },
};
