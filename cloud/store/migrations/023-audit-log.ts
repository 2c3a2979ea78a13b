import type { Kysely, Migration } from "kysely";

/**
 * The audit log (cloud/audit/audit-log.ts): one row per action a caller took that changed something — a
 * force command, a location PATCH, a session's forced end, a payment marked — written in the transaction
 * of the change. Read per operator, newest first, so the index leads with the operator and the time.
 */
export const auditLogMigration: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable("audit_log")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("operator_id", "text", (c) => c.notNull().references("operators.id"))
      .addColumn("at", "text", (c) => c.notNull())
      .addColumn("actor_kind", "text", (c) => c.notNull())
      .addColumn("actor_id", "text", (c) => c.notNull())
      .addColumn("action", "text", (c) => c.notNull())
      .addColumn("subject_type", "text", (c) => c.notNull())
      .addColumn("subject_id", "text", (c) => c.notNull())
      .addColumn("reason", "text")
      .addColumn("comment", "text")
      .addColumn("changes", "text", (c) => c.notNull())
      .addColumn("correlation_id", "text")
      .execute();
    await db.schema
      .createIndex("audit_log_operator_at")
      .on("audit_log")
      .columns(["operator_id", "at", "id"])
      .execute();
    await db.schema
      .createIndex("audit_log_subject")
      .on("audit_log")
      .columns(["subject_type", "subject_id"])
      .execute();
  },
};
