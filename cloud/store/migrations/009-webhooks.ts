import type { Kysely, Migration } from "kysely";

/** Outbound webhooks: endpoints, events waiting for their window, messages and the attempt log. */
export const webhooksMigration: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable("webhook_endpoints")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("operator_id", "text", (c) => c.notNull().references("operators.id"))
      .addColumn("url", "text", (c) => c.notNull())
      .addColumn("secrets", "text", (c) => c.notNull())
      .addColumn("types", "text", (c) => c.notNull())
      .addColumn("delivery", "text", (c) => c.notNull())
      .addColumn("allow_private", "integer", (c) => c.notNull())
      .addColumn("enabled", "integer", (c) => c.notNull())
      .addColumn("disabled_reason", "text")
      .addColumn("created_at", "text", (c) => c.notNull())
      .addColumn("updated_at", "text", (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex("webhook_endpoints_operator")
      .on("webhook_endpoints")
      .column("operator_id")
      .execute();
    await db.schema
      .createTable("webhook_pending_events")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("operator_id", "text", (c) => c.notNull().references("operators.id"))
      .addColumn("type", "text", (c) => c.notNull())
      .addColumn("event", "text", (c) => c.notNull())
      .addColumn("created_at", "text", (c) => c.notNull())
      .execute();
    // A flush takes the events of one operator and type, oldest first.
    await db.schema
      .createIndex("webhook_pending_events_window")
      .on("webhook_pending_events")
      .columns(["operator_id", "type", "created_at"])
      .execute();
    await db.schema
      .createTable("webhook_messages")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("endpoint_id", "text", (c) => c.notNull().references("webhook_endpoints.id"))
      .addColumn("operator_id", "text", (c) => c.notNull().references("operators.id"))
      .addColumn("type", "text", (c) => c.notNull())
      .addColumn("payload", "text", (c) => c.notNull())
      .addColumn("event_count", "integer", (c) => c.notNull())
      .addColumn("status", "text", (c) => c.notNull())
      .addColumn("attempts", "integer", (c) => c.notNull())
      .addColumn("next_attempt_at", "text", (c) => c.notNull())
      .addColumn("created_at", "text", (c) => c.notNull())
      .addColumn("queued_at", "text", (c) => c.notNull())
      .addColumn("delivered_at", "text")
      .addColumn("dead_at", "text")
      .addColumn("last_error", "text")
      .execute();
    // The head of each endpoint's queue (its oldest pending message) and the due ones.
    await db.schema
      .createIndex("webhook_messages_queue")
      .on("webhook_messages")
      .columns(["endpoint_id", "status", "queued_at"])
      .execute();
    await db.schema
      .createIndex("webhook_messages_due")
      .on("webhook_messages")
      .columns(["status", "next_attempt_at"])
      .execute();
    await db.schema
      .createTable("webhook_attempts")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("message_id", "text", (c) => c.notNull().references("webhook_messages.id"))
      .addColumn("endpoint_id", "text", (c) => c.notNull())
      .addColumn("attempt", "integer", (c) => c.notNull())
      .addColumn("at", "text", (c) => c.notNull())
      .addColumn("status_code", "integer")
      .addColumn("error", "text")
      .addColumn("duration_ms", "integer", (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex("webhook_attempts_message")
      .on("webhook_attempts")
      .columns(["message_id", "at"])
      .execute();
  },
};
