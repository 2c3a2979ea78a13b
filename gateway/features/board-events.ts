import type { Logger } from "pino";
import type { BoardMessage } from "../../shared/protocol/lock-bus/messages.ts";
import type { HardwareEvent } from "../../shared/wire/messages.ts";
import type { DeviceRegistry } from "../devices/device-registry.ts";
import type { Outbox } from "../store/outbox.ts";

/**
 * Unsolicited board events (flow 5): every one goes up through the durable outbox as a hardware event,
 * and a latch that moved by itself (by hand, or a door's hold timer) also reports the new lock state.
 */
export function reportBoardEvent(
  o: { outbox: Outbox; registry: DeviceRegistry; log: Logger; busName: string },
  e: Extract<BoardMessage, { kind: "event" }>,
): void {
  const device = o.registry.all().find((d) => d.bus?.board === e.addr && d.bus.channel === e.channel) ?? null;
  o.log.info(
    { bus: o.busName, addr: e.addr, channel: e.channel, event: e.event, device: device?.alias },
    "board event",
  );
  o.outbox.append({
    type: "hardware_event",
    device_id: device?.device_id ?? null,
    source: `${o.busName}/${e.addr}/${e.channel}`,
    event: e.event as HardwareEvent["event"],
    detail: "",
  });
  if (device && (e.event === "latch_locked" || e.event === "latch_unlocked")) {
    o.outbox.append({
      type: "device_state",
      device_id: device.device_id,
      lock_state: e.event === "latch_locked" ? "LOCKED" : "UNLOCKED",
    });
  }
}
