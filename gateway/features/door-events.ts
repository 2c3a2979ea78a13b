import type { GpioDoors } from "../adapters/hardware/gpio-doors.ts";
import type { Outbox, SensorReadings } from "../ports.ts";

/**
 * What a GPIO door does goes up like a board's events: its contact as a hardware event through the durable
 * outbox and as a reading, and its strike engaging again as the latch locked.
 */
export function reportDoorEvents(
  doors: Pick<GpioDoors, "on">,
  deps: { outbox: Pick<Outbox, "append">; sensors: Pick<SensorReadings, "record"> },
): void {
  doors.on("door", (device, open) => {
    deps.outbox.append({
      type: "hardware_event",
      device_id: device.device_id,
      source: `gpio/${device.alias}`,
      event: open ? "door_opened" : "door_closed",
      detail: "",
    });
    deps.sensors.record(device, { door_open: open }, "hardware_event");
  });
  doors.on("relocked", (device) => deps.sensors.record(device, { latch: "locked" }, "door_relock"));
}
