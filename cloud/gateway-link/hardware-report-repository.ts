import type { Executor } from "../store/db.ts";
import type { DeviceStateChangesTable, HardwareEventsTable } from "../store/schema.ts";

export type HardwareEventRow = HardwareEventsTable;
export type DeviceStateChangeRow = DeviceStateChangesTable;

/** What gateways reported of the hardware on their own: its events, and the device states they moved. */
export function hardwareReportRepository(db: Executor) {
  return {
    async recordEvent(row: HardwareEventRow): Promise<void> {
      await db.insertInto("hardware_events").values(row).execute();
    },

    async recordStateChange(row: DeviceStateChangeRow): Promise<void> {
      await db.insertInto("device_state_changes").values(row).execute();
    },

    /** The gateway's hardware events in the order the cloud received them (then by outbox and seq). */
    eventsOf(gatewayId: string): Promise<HardwareEventRow[]> {
      return db
        .selectFrom("hardware_events")
        .selectAll()
        .where("gateway_id", "=", gatewayId)
        .orderBy("received_at")
        .orderBy("outbox_id")
        .orderBy("seq")
        .execute();
    },

    /** The device's state changes in the order the cloud received them (then by outbox and seq). */
    stateChangesOf(deviceId: string): Promise<DeviceStateChangeRow[]> {
      return db
        .selectFrom("device_state_changes")
        .selectAll()
        .where("device_id", "=", deviceId)
        .orderBy("received_at")
        .orderBy("outbox_id")
        .orderBy("seq")
        .execute();
    },
  };
}

export type HardwareReportRepository = ReturnType<typeof hardwareReportRepository>;
