import type { Kysely, Migration } from "kysely";

/** Access lists, their members and phone invites. */
export const accessListsMigration: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable("access_lists")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("operator_id", "text", (c) => c.notNull().references("operators.id"))
      .addColumn("location_id", "text", (c) => c.notNull().references("locations.id"))
      .addColumn("kind", "text", (c) => c.notNull())
      .addColumn("name", "text", (c) => c.notNull())
      .addColumn("retired_at", "text")
      .addColumn("created_at", "text", (c) => c.notNull())
      .addColumn("updated_at", "text", (c) => c.notNull())
      .execute();
    await db.schema.createIndex("access_lists_location").on("access_lists").column("location_id").execute();
    await db.schema
      .createTable("access_list_members")
      .addColumn("access_list_id", "text", (c) => c.notNull().references("access_lists.id"))
      .addColumn("user_id", "text", (c) => c.notNull().references("external_users.id"))
      .addColumn("operator_id", "text", (c) => c.notNull().references("operators.id"))
      .addColumn("joined_at", "text", (c) => c.notNull())
      .addColumn("payment_period", "text")
      .addColumn("recurring_payment", "integer")
      .addColumn("period_anchor", "text")
      .addColumn("ends_at", "text")
      .addColumn("end_reason", "text")
      .addColumn("comment", "text", (c) => c.notNull())
      .addColumn("external_id", "text")
      .addColumn("updated_at", "text", (c) => c.notNull())
      .addPrimaryKeyConstraint("access_list_members_pk", ["access_list_id", "user_id"])
      .execute();
    // Enforcement at lock and book looks a user up across the lists of one location.
    await db.schema
      .createIndex("access_list_members_user")
      .on("access_list_members")
      .column("user_id")
      .execute();
    await db.schema
      .createTable("access_list_invites")
      .addColumn("access_list_id", "text", (c) => c.notNull().references("access_lists.id"))
      .addColumn("phone_number", "text", (c) => c.notNull())
      .addColumn("operator_id", "text", (c) => c.notNull().references("operators.id"))
      .addColumn("payment_period", "text")
      .addColumn("recurring_payment", "integer")
      .addColumn("comment", "text", (c) => c.notNull())
      .addColumn("external_id", "text")
      .addColumn("created_at", "text", (c) => c.notNull())
      .addColumn("expires_at", "text", (c) => c.notNull())
      .addPrimaryKeyConstraint("access_list_invites_pk", ["access_list_id", "phone_number"])
      .execute();
    // Sign-in applies the invites of one operator for one phone number.
    await db.schema
      .createIndex("access_list_invites_phone")
      .on("access_list_invites")
      .columns(["operator_id", "phone_number"])
      .execute();
  },
};
