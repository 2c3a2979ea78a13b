import type { Logger } from "pino";
import type { SleepState } from "../../shared/domain/device-types.ts";
import type { BoardMessage } from "../../shared/protocol/lock-bus/messages.ts";
import type { HardwareEvent } from "../../shared/wire/messages.ts";
import type { LockBus } from "../adapters/hardware/lock-buses.ts";
import type {
  Actuator,
  DeviceDirectory,
  MappedDevice,
  Outbox,
  Reading,
  SensorReadings,
  SleepStates,
} from "../ports.ts";
import { keepReport } from "./store-full.ts";

type BoardEvent = Extract<BoardMessage, { kind: "event" }>;

const READING: Partial<Record<BoardEvent["event"], Reading>> = {
  latch_locked: { latch: "locked" },
  latch_unlocked: { latch: "unlocked" },
  door_opened: { door_open: true },
  door_closed: { door_open: false },
  item_inserted: { item_present: true },
  item_removed: { item_present: false },
};

/** Power-save announcements (docs/hardware-protocol.md, "Power save"): device state, not site events. */
const SLEEP: Partial<Record<BoardEvent["event"], SleepState>> = {
  light_sleep: "LIGHT_SLEEP",
  deep_sleep: "DEEP_SLEEP",
  awake: "",
};

export const isDoor = (device: MappedDevice) => device.type === "BIKE_HOUSE_DOOR" || device.type === "DOOR";

/**
 * Unsolicited board events (flow 5): every one goes up through the durable outbox as a hardware event;
 * what it says about a device's sensors (a latch turned by hand, a door, an item) goes to
 * SensorReadings, which reports the change so the cloud's state follows the hardware. A door lock is engaged again
 * as soon as its door closes; a board that reset is read again, since its channels may have changed.
 * A channel's sleep and wake-up go to SleepStates instead (a `device_state` with `sleep_state`), and any
 * other event from a channel shows it awake.
 */
export function handleBoardEvent(
  deps: {
    outbox: Outbox;
    registry: DeviceDirectory;
    sensors: SensorReadings;
    log: Logger;
    busName: string;
    relockDoor: (device: MappedDevice) => void;
    readBoard: (addr: number) => void;
    sleep?: SleepStates;
  },
  e: BoardEvent,
): void {
  const device = deps.registry.onChannel(e.addr, e.channel) ?? null;
  const sleep = SLEEP[e.event];
  if (sleep !== undefined) {
    const where = { bus: deps.busName, addr: e.addr, channel: e.channel, device: device?.alias };
    deps.log.info({ ...where, event: e.event }, "board power save");
    if (device) deps.sleep?.record(device, sleep, "hardware_event");
    return;
  }
  if (device) deps.sleep?.record(device, "", "hardware_event");
  deps.log.info(
    { bus: deps.busName, addr: e.addr, channel: e.channel, event: e.event, device: device?.alias },
    "board event",
  );
  const where = { bus: deps.busName, addr: e.addr, channel: e.channel, event: e.event };
  // A full state disk loses the reports, never what follows from the event (a door closed locks again).
  const keep = (report: string, write: () => unknown) => keepReport(deps.log, where, report, write);
  keep("hardware_event", () =>
    deps.outbox.append({
      type: "hardware_event",
      device_id: device?.device_id ?? null,
      source: `${deps.busName}/${e.addr}/${e.channel}`,
      event: e.event as HardwareEvent["event"],
      detail: "",
    }),
  );
  if (e.event === "reset") {
    deps.readBoard(e.addr);
    return;
  }
  const reading = READING[e.event];
  if (!device || !reading) return;
  keep("device_state", () => deps.sensors.record(device, reading, "hardware_event"));
  // Unless the lock is known to be engaged already (an unknown one is locked: that is always safe).
  if (e.event === "door_closed" && isDoor(device) && deps.sensors.get(device.device_id).latch !== "locked")
    deps.relockDoor(device);
}

/** Engages a bus-wired door lock again (its door closed) and reports where the latch ended up. */
export function doorRelocker(actuator: Actuator, sensors: SensorReadings, log: Logger) {
  return (device: MappedDevice): void =>
    void actuator.run(device, "lock").then((outcome) => {
      if (outcome.sensors) sensors.record(device, outcome.sensors, "door_relock");
      if (!outcome.ok) log.warn({ device: device.alias, reason: outcome.reason }, "door did not lock again");
    });
}

/**
 * Connects every bus's board events to `handleBoardEvent`; a board that answers again (or before the
 * start) is read again, since whatever happened to its channels while it was away is unknown.
 */
export function watchBoardEvents(
  buses: readonly LockBus[],
  deps: Omit<Parameters<typeof handleBoardEvent>[0], "busName">,
): void {
  for (const b of buses) {
    b.client.on("event", (e) => handleBoardEvent({ ...deps, busName: b.cfg.name }, e));
    b.monitor.on("board_back", (addr) => void deps.readBoard(addr));
  }
}
