import type { Logger } from "pino";
import type { Monotonic } from "../../shared/time/clock.ts";
import { every } from "../../shared/time/every.ts";
import type { Clock, DeviceDirectory, Outbox, Pending, SensorReadings } from "../ports.ts";

type HardwareEventDraft = Extract<Pending, { type: "hardware_event" }>;

/**
 * Raises `door_held_open` once per opening when a door (a bike-house door or a locker's) stays open for
 * `heldOpenS` (spec: a door left open 5 minutes or more → `status` webhook). Decided here, on the gateway,
 * so it is noticed and kept (outbox) while the uplink is down. Checks every `everyS`; how long a door has
 * stood open is elapsed time since the reading that first showed it open, never the wall clock: a clock set
 * a day ahead would raise it for a door opened a moment ago, one set back would hold it for a day. One the
 * full store refused is raised at the next round, whether the door has closed since or not (in memory: a
 * restart while the store is full loses it, as it does an owed refusal).
 */
export function createDoorWatch(deps: {
  registry: DeviceDirectory;
  sensors: SensorReadings;
  outbox: Outbox;
  clock: Clock;
  monotonic: Monotonic;
  log: Logger;
  heldOpenS: number;
  everyS: number;
}) {
  /** Openings already raised: door → since when it stood open (monotonic). */
  const reported = new Map<string, number>();
  /** Raised and not yet in the outbox (the full store refused them), oldest first. */
  const unjournaled: HardwareEventDraft[] = [];

  function check(): number {
    const now = deps.monotonic.nowMs();
    let raised = 0;
    for (const device of deps.registry.all()) {
      const openSince = deps.sensors.openSince(device.device_id);
      if (openSince === null) reported.delete(device.device_id);
      if (openSince === null || reported.get(device.device_id) === openSince) continue;
      const openMs = now - openSince;
      if (openMs < deps.heldOpenS * 1000) continue;
      const since = new Date(deps.clock.now().getTime() - openMs).toISOString();
      reported.set(device.device_id, openSince);
      raised++;
      deps.log.warn({ device: device.alias, open_since: since }, "door held open");
      unjournaled.push({
        type: "hardware_event",
        device_id: device.device_id,
        source: `door/${device.alias}`,
        event: "door_held_open",
        detail: `open since ${since} (${Math.floor(openMs / 60_000)} min)`,
      });
    }
    // Oldest first; one the store refuses stays first for the next round.
    while (unjournaled.length > 0) {
      deps.outbox.append(unjournaled[0] as HardwareEventDraft);
      unjournaled.shift();
    }
    return raised;
  }

  const rounds = every(deps.clock, deps.everyS * 1000, check, (err) =>
    deps.log.error({ err }, "door watch failed"),
  );
  return { check, start: rounds.start, stop: rounds.stop };
}
