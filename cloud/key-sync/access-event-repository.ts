import type { Executor } from "../store/db.ts";
import type { AccessEventsTable } from "../store/tables/key-sync-tables.ts";

/** Taps as the gateways decided them, kept for the operator. */
export function accessEventRepository(db: Executor) {
  return {
    /** The operator and location a tap at this gateway is kept under; undefined for an unknown gateway. */
    placeOf(gatewayId: string): Promise<{ operator_id: string; location_id: string } | undefined> {
      return db
        .selectFrom("gateways")
        .select(["operator_id", "location_id"])
        .where("id", "=", gatewayId)
        .executeTakeFirst();
    },

    /** Keeps a tap once: the same outbox message applied again (a replay, another replica) is ignored. */
    async record(event: AccessEventsTable): Promise<void> {
      await db
        .insertInto("access_events")
        .values(event)
        .onConflict((oc) => oc.columns(["gateway_id", "outbox_id", "seq"]).doNothing())
        .execute();
    },

    /** The taps kept at a device, in the order the gateway observed them. */
    atDevice(deviceId: string): Promise<AccessEventsTable[]> {
      return db
        .selectFrom("access_events")
        .selectAll()
        .where("device_id", "=", deviceId)
        .orderBy("observed_at")
        .orderBy("gateway_id")
        .orderBy("outbox_id")
        .orderBy("seq")
        .execute();
    },
  };
}
