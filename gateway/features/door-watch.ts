import type { Logger } from "pino";
import { every } from "../../shared/time/every.ts";
import type { Clock, DeviceDirectory, Outbox, SensorReadings } from "../ports.ts";

/**
 * Raises `door_held_open` once per opening when a door (a bike-house door or a locker's) stays open for
 * `heldOpenS` (spec: a door left open 5 minutes or more → `status` webhook). Decided here, on the gateway,
 * so it is noticed and kept (outbox) while the uplink is down. Checks every `everyS` from the sensor
 * picture: the opening's time is the reading that first showed it open.
 */
export function createDoorWatch(deps: {
  registry: DeviceDirectory;
  sensors: SensorReadings;
  outbox: Outbox;
  clock: Clock;
  log: Logger;
  heldOpenS: number;
  everyS: number;
}) {
  /** Doors seen open: since when, and whether this opening was already reported. */
  const open = new Map<string, { since: number; reported: boolean }>();

  function check(): number {
    const now = deps.clock.now().getTime();
    let raised = 0;
    for (const device of deps.registry.all()) {
      const s = deps.sensors.get(device.device_id);
      if (s.door_open !== true) {
        open.delete(device.device_id);
        continue;
      }
      const seen = open.get(device.device_id) ?? {
        since: s.read_at ? Date.parse(s.read_at) : now,
        reported: false,
      };
      open.set(device.device_id, seen);
      if (seen.reported || now - seen.since < deps.heldOpenS * 1000) continue;
      seen.reported = true;
      raised++;
      const minutes = Math.floor((now - seen.since) / 60_000);
      deps.outbox.append({
        type: "hardware_event",
        device_id: device.device_id,
        source: `door/${device.alias}`,
        event: "door_held_open",
        detail: `open since ${new Date(seen.since).toISOString()} (${minutes} min)`,
      });
      deps.log.warn(
        { device: device.alias, open_since: new Date(seen.since).toISOString() },
        "door held open",
      );
    }
    return raised;
  }

  const rounds = every(deps.clock, deps.everyS * 1000, check, (err) =>
    deps.log.error({ err }, "door watch failed"),
  );
  return { check, start: rounds.start, stop: rounds.stop };
}
