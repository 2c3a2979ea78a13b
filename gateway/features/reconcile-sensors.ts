import type { Logger } from "pino";
import { cronTask, parseCron } from "../../shared/time/cron.ts";
import type { SensorCause } from "../../shared/wire/messages.ts";
import type { Actuator, Clock, DeviceDirectory, MappedDevice, SensorReadings } from "../ports.ts";

/**
 * Reads devices' sensors and hands the readings to SensorReadings, which tells the cloud what changed
 * (ARCHITECTURE flow 6). Runs when a board answers for the first time or again after an outage, when a
 * board resets, for devices a new device map brings, and on a periodic sweep that catches a change whose
 * event was lost.
 */
export function createSensorReconciler(deps: {
  registry: DeviceDirectory;
  sensors: SensorReadings;
  actuator: Actuator;
  clock: Clock;
  log: Logger;
  /** A cron expression for the periodic sweep (shared/time/cron.ts); none when null. */
  sweep: string | null;
}) {
  /** Boards read at least once since the start: a later read of one is a "board_back". */
  const readBoards = new Set<number>();
  let task: ReturnType<typeof cronTask> | null = null;

  async function readDevice(device: MappedDevice, cause: SensorCause): Promise<void> {
    const out = await deps.actuator.run(device, "status");
    if (out.sensors) deps.sensors.record(device, out.sensors, cause);
    else deps.log.debug({ device: device.alias, reason: out.reason }, "sensors not read");
  }

  async function readAll(devices: MappedDevice[], cause: SensorCause): Promise<void> {
    for (const device of devices) {
      if (device.type === "GUARD") continue;
      await readDevice(device, cause).catch((err: unknown) =>
        deps.log.warn({ err, device: device.alias }, "reading the sensors failed"),
      );
    }
  }

  return {
    readDevice,
    readAll,
    /** A board answered (again), or reset: its channels may have changed meanwhile. */
    readBoard(addr: number): Promise<void> {
      const cause = readBoards.has(addr) ? "board_back" : "startup";
      readBoards.add(addr);
      return readAll(deps.registry.onBoard(addr), cause);
    },
    start(): void {
      if (!deps.sweep) return;
      // A sweep still reading when the next one is due makes that one pass (cronTask never overlaps).
      task = cronTask(
        deps.clock,
        parseCron(deps.sweep),
        () => readAll(deps.registry.all(), "sweep"),
        (err) => deps.log.warn({ err }, "sensor sweep failed"),
      );
      task.start();
    },
    stop(): void {
      task?.stop();
      task = null;
    },
  };
}

export type SensorReconciler = ReturnType<typeof createSensorReconciler>;
