import type { Kysely, Migration } from "kysely";

/** Photos taken by take-photo, and the parts of those still on their way (docs/decisions/photos.md). */
export const photosMigration: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable("photo_parts")
      .addColumn("command_id", "text", (c) => c.notNull().references("commands.id"))
      .addColumn("part", "integer", (c) => c.notNull())
      .addColumn("parts", "integer", (c) => c.notNull())
      .addColumn("mime", "text", (c) => c.notNull())
      .addColumn("data", "text", (c) => c.notNull())
      .addColumn("received_at", "text", (c) => c.notNull())
      .addPrimaryKeyConstraint("photo_parts_pk", ["command_id", "part"])
      .execute();
    await db.schema
      .createTable("photos")
      .addColumn("command_id", "text", (c) => c.primaryKey().references("commands.id"))
      .addColumn("device_id", "text", (c) => c.notNull().references("devices.id"))
      .addColumn("operator_id", "text", (c) => c.notNull().references("operators.id"))
      .addColumn("mime", "text", (c) => c.notNull())
      .addColumn("bytes", "text", (c) => c.notNull())
      .addColumn("size", "integer", (c) => c.notNull())
      .addColumn("taken_at", "text", (c) => c.notNull())
      .addColumn("received_at", "text", (c) => c.notNull())
      .execute();
  },
};
