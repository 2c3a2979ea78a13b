import type { Kysely, Migration } from "kysely";

/** RFID whitelists, their cards (entities) and the devices and locations they apply to (targets). */
export const whitelistsMigration: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable("whitelists")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("operator_id", "text", (c) => c.notNull().references("operators.id"))
      .addColumn("name", "text", (c) => c.notNull())
      .addColumn("description", "text", (c) => c.notNull())
      .addColumn("created_at", "text", (c) => c.notNull())
      .addColumn("updated_at", "text", (c) => c.notNull())
      .execute();
    await db.schema.createIndex("whitelists_operator").on("whitelists").column("operator_id").execute();
    await db.schema
      .createTable("whitelist_entities")
      .addColumn("whitelist_id", "text", (c) => c.notNull().references("whitelists.id"))
      .addColumn("card_id", "text", (c) => c.notNull())
      .addColumn("status", "text", (c) => c.notNull())
      .addColumn("expires_at", "text")
      .addColumn("is_master_key", "integer", (c) => c.notNull())
      .addColumn("comment", "text", (c) => c.notNull())
      .addColumn("created_at", "text", (c) => c.notNull())
      .addColumn("updated_at", "text", (c) => c.notNull())
      .addPrimaryKeyConstraint("whitelist_entities_pk", ["whitelist_id", "card_id"])
      .execute();
    // A tap asks which whitelists hold one card.
    await db.schema
      .createIndex("whitelist_entities_card")
      .on("whitelist_entities")
      .column("card_id")
      .execute();
    await db.schema
      .createTable("whitelist_targets")
      .addColumn("whitelist_id", "text", (c) => c.notNull().references("whitelists.id"))
      .addColumn("target_type", "text", (c) => c.notNull())
      .addColumn("target_id", "text", (c) => c.notNull())
      .addColumn("keys_only", "integer", (c) => c.notNull())
      .addColumn("created_at", "text", (c) => c.notNull())
      .addPrimaryKeyConstraint("whitelist_targets_pk", ["whitelist_id", "target_type", "target_id"])
      .execute();
    // The whitelists of a device or a location (the per-device limit, a location's list, key sync).
    await db.schema
      .createIndex("whitelist_targets_target")
      .on("whitelist_targets")
      .column("target_id")
      .execute();
  },
};
