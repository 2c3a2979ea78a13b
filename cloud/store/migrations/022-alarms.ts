import type { Kysely, Migration } from "kysely";

/**
 * Alarms kept for the operator's inbox (docs/decisions/alarms.md), beside the webhooks that tell of them.
 * `open_key` is the alarm's kind and subject while it is open and null once cleared: its unique index lets
 * at most one open alarm of a kind per subject exist, so a repeat is counted on it rather than raised again,
 * even by two replicas at once. `version` grows with every change, and the history entry of a change is
 * numbered by it.
 */
export const alarmsMigration: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable("alarms")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("operator_id", "text", (c) => c.notNull().references("operators.id"))
      .addColumn("location_id", "text", (c) => c.notNull())
      .addColumn("device_id", "text")
      .addColumn("subject", "text", (c) => c.notNull())
      .addColumn("kind", "text", (c) => c.notNull())
      .addColumn("severity", "text", (c) => c.notNull())
      .addColumn("status", "text", (c) => c.notNull())
      .addColumn("open_key", "text", (c) => c.unique())
      .addColumn("occurrences", "integer", (c) => c.notNull())
      .addColumn("details", "text", (c) => c.notNull())
      .addColumn("raised_at", "text", (c) => c.notNull())
      .addColumn("updated_at", "text", (c) => c.notNull())
      .addColumn("last_occurred_at", "text", (c) => c.notNull())
      .addColumn("acknowledged", "text")
      .addColumn("assignee", "text")
      .addColumn("cleared", "text")
      .addColumn("version", "integer", (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex("alarms_operator_raised")
      .on("alarms")
      .columns(["operator_id", "raised_at"])
      .execute();
    await db.schema.createIndex("alarms_device").on("alarms").column("device_id").execute();
    await db.schema
      .createTable("alarm_history")
      .addColumn("alarm_id", "text", (c) => c.notNull().references("alarms.id"))
      .addColumn("version", "integer", (c) => c.notNull())
      .addColumn("change", "text", (c) => c.notNull())
      .addPrimaryKeyConstraint("alarm_history_pk", ["alarm_id", "version"])
      .execute();
  },
};
