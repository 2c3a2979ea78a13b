import { type Kysely, type Migration, sql } from "kysely";

/**
 * The console's staff (people, apart from the API's OAuth2 clients) and their sign-in sessions. An email is
 * unique whatever its case; a session row holds only the SHA-256 of the cookie's token, so it can be
 * revoked and a copy of the store signs nobody in (docs/decisions/console.md).
 */
export const staffMigration: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable("staff")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("operator_id", "text", (c) => c.references("operators.id"))
      .addColumn("email", "text", (c) => c.notNull())
      .addColumn("password_hash", "text", (c) => c.notNull())
      .addColumn("role", "text", (c) => c.notNull())
      .addColumn("disabled_at", "text")
      .addColumn("created_at", "text", (c) => c.notNull())
      .addColumn("updated_at", "text", (c) => c.notNull())
      .execute();
    await db.schema.createIndex("staff_email").on("staff").unique().expression(sql`lower(email)`).execute();
    await db.schema.createIndex("staff_operator").on("staff").column("operator_id").execute();
    await db.schema
      .createTable("staff_sessions")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("staff_id", "text", (c) => c.notNull().references("staff.id"))
      .addColumn("token_hash", "text", (c) => c.notNull().unique())
      .addColumn("csrf_token", "text", (c) => c.notNull())
      .addColumn("created_at", "text", (c) => c.notNull())
      .addColumn("last_seen_at", "text", (c) => c.notNull())
      .addColumn("revoked_at", "text")
      .execute();
    await db.schema.createIndex("staff_sessions_staff").on("staff_sessions").column("staff_id").execute();
  },
};
