import type { Kysely, Migration } from "kysely";

/**
 * `devices.sensor_marks`: the outbox position of the last report applied for each sensor field, so
 * reports of one gateway applied out of order by several replicas cannot set an older value over a
 * newer one (cloud/devices/reading-order.ts).
 */
export const sensorMarksMigration: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable("devices").addColumn("sensor_marks", "text").execute();
  },
};
