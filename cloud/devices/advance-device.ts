import {
  type DeviceInput,
  type DeviceStateValue,
  isInterim,
  transitionDevice,
} from "../../shared/domain/device-machine.ts";
import { familyOf } from "../../shared/domain/device-types.ts";
import { sessionsFollowDevice, sessionsFollowLatch, sessionsOpenedAt } from "../sessions/session-recorder.ts";
import type { Executor } from "../store/db.ts";
import type { DeviceRecord } from "../store/device-record.ts";
import { type DeviceChanges, deviceRepository, type SensorReading } from "./device-repository.ts";
import { freshReading, type ReadingPosition } from "./reading-order.ts";
import { type CommandTimeoutConfig, timeoutsFor } from "./timeouts.ts";

const MAX_CAS_ATTEMPTS = 5;

export type DeviceStep = {
  deviceId: string;
  /** The command that caused the input; null for inputs no command caused (deadlines, sensors). */
  commandId: string | null;
  input: DeviceInput;
  now: Date;
  /** When the hardware did it, on the cloud's clock (`factTime`); `now` when not given (sessions' events). */
  happenedAt?: string;
  cfg: CommandTimeoutConfig;
  /** What the hardware reported with the input; `lock_state` here is a fresh reading. */
  sensors?: SensorReading;
  /** Where the report carrying `sensors` sits in its gateway's outbox: a later one's fields win. */
  reading?: ReadingPosition;
};

export type DeviceStepResult = { device: DeviceRecord; changed: boolean; from: DeviceStateValue };

/**
 * What one input does to a device (pure). Only the command that drives the device's current interim
 * state may move it; a superseded command's late report changes nothing but the sensor columns. When the
 * input came with a fresh lock reading and leaves the device in a stable state, that state gives way to
 * the reading (the hardware is the truth).
 */
export function stepDevice(
  device: DeviceRecord,
  step: Omit<DeviceStep, "deviceId">,
): {
  changes: DeviceChanges;
  changed: boolean;
  lockStale: boolean;
  latchOpened: boolean;
  openedBefore: boolean;
} {
  const { commandId, now, cfg } = step;
  // Applied out of outbox order (replicas), a field a later report has set keeps that report's value.
  const order = freshReading(device.sensor_marks, step.reading, step.sensors ?? {});
  const sensors = order.fresh;
  const lockStale = order.stale.includes("lock_state");
  const family = familyOf(device.type);
  const t = timeoutsFor(cfg, device.power_save_strategy);
  const mine = commandId === null || device.command_id === commandId;
  // A door's release window consults the latest lock reading: one held open has not re-engaged.
  const input: DeviceInput =
    step.input.kind === "expired"
      ? { kind: "expired", lockState: sensors.lock_state ?? device.lock_state }
      : step.input;
  let state = device.state;
  let changed = false;
  const feed = (i: DeviceInput) => {
    const tr = transitionDevice(family, state, i, now, t);
    if (!tr.refused && tr.changed) {
      state = tr.state;
      changed = true;
    }
  };
  if (mine && !(input.kind === "sensed" && lockStale)) feed(input);
  if (mine && sensors.lock_state && input.kind !== "sensed" && !isInterim(state.value))
    feed({ kind: "sensed", lockState: sensors.lock_state });
  const changes: DeviceChanges = { ...sensors };
  if (order.marks) changes.sensor_marks = order.marks;
  if (changed) {
    changes.state = state;
    if (!isInterim(state.value)) changes.command_id = null;
    // The occupant leaves with an unlock; a failed lock leaves the device unclaimed again, unless the
    // latch locked all the same (the rider's bike is in) and was not someone else's already.
    const unclaimed = input.kind === "failed" && (state.value !== "LOCKED" || input.heldByAnother === true);
    if (state.value === "UNLOCKED" || unclaimed) {
      changes.user_id = null;
      changes.user_access_key = null;
    }
    // The booker is kept while a command in flight may yet leave the device BOOKED (a book, or a lock
    // that falls back to the booking).
    if (state.value !== "BOOKED" && !isInterim(state.value)) changes.booked_by = null;
  }
  // A latch found open while a command holds the device (an operator's force-lock after a master key's
  // unlock) moves no state, yet ends the session the device held. A command's own movement comes in its
  // report, not as a reading: this one is someone else's (a card, a hand), even while an unlock waits.
  const latchOpened = !changed && input.kind === "sensed" && input.lockState === "UNLOCKED" && !lockStale;
  // A reading that found the latch open, overtaken by a later lock reading (a command's report or a
  // reading applied first): the state stays with the later one, yet a session active since before the
  // opening ended there.
  const openedBefore = lockStale && step.sensors?.lock_state === "UNLOCKED";
  return { changes, changed, lockStale, latchOpened, openedBefore };
}

/** Feeds the device machine one input (`stepDevice`) with a compare-and-set on the device's version. */
export async function advanceDevice(tx: Executor, step: DeviceStep): Promise<DeviceStepResult | null> {
  const devices = deviceRepository(tx);
  for (let attempt = 0; attempt < MAX_CAS_ATTEMPTS; attempt++) {
    const device = await devices.find(step.deviceId);
    if (!device) return null;
    const from = device.state.value;
    const { changes, changed, lockStale, latchOpened, openedBefore } = stepDevice(device, step);
    if (!changed && Object.keys(changes).length === 0) return { device, changed: false, from };
    const written = await devices.compareAndSet(device, changes, step.now);
    if (!written) continue;
    // Sessions follow the device: one settled free or locked holds no active session or booking it had.
    if (changed) await sessionsFollowDevice(tx, written, step.now, step.happenedAt);
    else if (latchOpened) await sessionsFollowLatch(tx, written, step.now, step.happenedAt);
    else if (openedBefore && step.happenedAt) await sessionsOpenedAt(tx, written, step.now, step.happenedAt);
    // Its lock reading was older than the one the device holds: that later report takes effect after
    // this step, as it would have had it come after it.
    if (lockStale && step.input.kind !== "sensed" && !isInterim(written.state.value)) {
      const later = await advanceDevice(tx, {
        deviceId: step.deviceId,
        commandId: null,
        input: { kind: "sensed", lockState: written.lock_state },
        now: step.now,
        cfg: step.cfg,
      });
      if (later) return { device: later.device, changed: changed || later.changed, from };
    }
    return { device: written, changed, from };
  }
  throw new Error(`device ${step.deviceId}: too much contention`);
}

/**
 * Writes a reading that moves no state (door, item, sleep) in outbox order (`freshReading`), with a
 * compare-and-set on the device's version. False when the device is unknown or every field was stale.
 */
export async function recordReadingInOrder(
  tx: Executor,
  deviceId: string,
  sensors: SensorReading,
  reading: ReadingPosition,
): Promise<boolean> {
  const devices = deviceRepository(tx);
  for (let attempt = 0; attempt < MAX_CAS_ATTEMPTS; attempt++) {
    const device = await devices.find(deviceId);
    if (!device) return false;
    const { fresh, stale, marks } = freshReading(device.sensor_marks, reading, sensors);
    if (stale.length > 0 && !marks) return false;
    if (!marks) {
      await devices.recordReading(deviceId, fresh); // carries no ordered field: nothing to order
      return true;
    }
    if (await devices.recordReadingIf(device, { ...fresh, sensor_marks: marks })) return true;
  }
  throw new Error(`device ${deviceId}: too much contention`);
}
