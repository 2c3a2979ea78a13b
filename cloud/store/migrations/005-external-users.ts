import type { Kysely, Migration } from "kysely";

/** External users (riders) of an operator, their refresh tokens, and the operator's verification callbacks. */
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
    await db.schema
      .createTable("external_user_refresh_tokens")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("operator_id", "text", (c) => c.notNull().references("operators.id"))
      .addColumn("user_id", "text", (c) => c.notNull().references("external_users.id"))
      .addColumn("token_hash", "text", (c) => c.notNull().unique())
      .addColumn("created_at", "text", (c) => c.notNull())
      .addColumn("expires_at", "text", (c) => c.notNull())
      .addColumn("last_used_at", "text")
      .addColumn("revoked_at", "text")
      .execute();
    await db.schema
      .createIndex("external_user_refresh_tokens_user")
      .on("external_user_refresh_tokens")
      .columns(["user_id", "created_at"])
      .execute();
    await db.schema
      .createTable("external_user_callbacks")
      .addColumn("operator_id", "text", (c) => c.primaryKey().references("operators.id"))
      .addColumn("sign_up_url", "text", (c) => c.notNull())
      .addColumn("sign_in_url", "text", (c) => c.notNull())
      .addColumn("allow_private_addresses", "integer", (c) => c.notNull())
      .addColumn("updated_at", "text", (c) => c.notNull())
      .execute();
  },
};
