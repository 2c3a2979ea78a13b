import type { Kysely, Migration } from "kysely";

/**
 * Signed verification callbacks and sign-ups that store no user until the operator accepts them: the
 * operator's signing secrets beside its callback addresses (empty until the manifest is applied again, and
 * then no callback is sent), and the pending sign-ups.
 */
export const signUpSafetyMigration: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .alterTable("external_user_callbacks")
      .addColumn("secrets", "text", (c) => c.notNull().defaultTo("[]"))
      .execute();
    await db.schema
      .createTable("external_user_sign_ups")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("operator_id", "text", (c) => c.notNull().references("operators.id"))
      .addColumn("user_id", "text", (c) => c.notNull())
      .addColumn("created_at", "text", (c) => c.notNull())
      .addColumn("expires_at", "text", (c) => c.notNull())
      .addUniqueConstraint("external_user_sign_ups_operator_user", ["operator_id", "user_id"])
      .execute();
    await db.schema
      .createIndex("external_user_sign_ups_expiry")
      .on("external_user_sign_ups")
      .column("expires_at")
      .execute();
  },
};
