import type { Kysely, Migration } from "kysely";

/** External users (riders) of an operator and their refresh tokens. */
export const externalUsersMigration: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable("external_users")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("operator_id", "text", (c) => c.notNull().references("operators.id"))
      .addColumn("user_id", "text", (c) => c.notNull())
      .addColumn("phone_number", "text")
      .addColumn("created_at", "text", (c) => c.notNull())
      .addUniqueConstraint("external_users_operator_user", ["operator_id", "user_id"])
      .execute();
    await db.schema
      .createIndex("external_users_phone")
      .on("external_users")
      .columns(["operator_id", "phone_number"])
      .execute();
  },
};
