import type { EventEmitter } from "node:events";
import type { Logger } from "pino";
import type { DoorEvents } from "../adapters/hardware/gpio-doors.ts";
import type { Outbox, SensorReadings } from "../ports.ts";
import { keepReport } from "./store-full.ts";

/**
 * What a GPIO door does goes up like a board's events: its contact as a hardware event through the durable
 * outbox and as a reading, and its strike engaging again as the latch locked. A full store loses the
 * event (a reading it refuses is owed and told later), and never stops the door's own handling.
 */
export function reportDoorEvents(
  doors: Pick<EventEmitter<DoorEvents>, "on">,
  deps: { outbox: Pick<Outbox, "append">; sensors: Pick<SensorReadings, "record">; log: Logger },
): void {
  doors.on("door", (device, open) => {
    const where = { device: device.alias, event: open ? "door_opened" : "door_closed" };
    keepReport(deps.log, where, "hardware_event", () =>
      deps.outbox.append({
        type: "hardware_event",
        device_id: device.device_id,
        source: `gpio/${device.alias}`,
        event: open ? "door_opened" : "door_closed",
        detail: "",
      }),
    );
    keepReport(deps.log, where, "device_state", () =>
      deps.sensors.record(device, { door_open: open }, "hardware_event"),
    );
  });
  doors.on("relocked", (device) =>
    keepReport(deps.log, { device: device.alias, event: "relocked" }, "device_state", () =>
      deps.sensors.record(device, { latch: "locked" }, "door_relock"),
    ),
  );
}
