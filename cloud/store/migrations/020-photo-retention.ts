import { type Kysely, type Migration, sql } from "kysely";

/**
 * Photos are kept 30 days and 50 per device (cloud/photos/photo-retention.ts). A photo past either keeps
 * its row without its bytes (`pruned_at`), so its command answers "deleted" rather than "not arrived
 * yet", and a late copy of one of its parts is still known as a repeat. The indexes hold only the photos
 * still kept, which is all the retention reads.
 */
export const photoRetentionMigration: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable("photos").addColumn("pruned_at", "text").execute();
    await db.schema
      .createIndex("photos_kept_by_device")
      .on("photos")
      .columns(["device_id", "received_at"])
      .where(sql.ref("pruned_at"), "is", null)
      .execute();
    await db.schema
      .createIndex("photos_kept_by_age")
      .on("photos")
      .column("received_at")
      .where(sql.ref("pruned_at"), "is", null)
      .execute();
  },
};
