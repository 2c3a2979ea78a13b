import { systemMonotonic } from "../../shared/node/system-clock.ts";
import type { LatchState } from "../../shared/protocol/lock-bus/messages.ts";
import type { Monotonic } from "../../shared/time/clock.ts";
import type { SensorCause } from "../../shared/wire/messages.ts";
import type { Clock, MappedDevice, Outbox, Reading, SensorReadings, Sensors } from "../ports.ts";

const EMPTY: Sensors = { latch: null, door_open: null, item_present: null, read_at: null };
const FIELDS = ["latch", "door_open", "item_present"] as const;

/**
 * The SensorReadings port, reporting through the outbox: the gateway's live picture of its devices'
 * sensors (latch, door, item), and the one place that tells the cloud about them (ARCHITECTURE flow 6: the
 * hardware is the truth). A reading that differs from what the cloud last heard goes up the durable outbox
 * as a `device_state` with its cause; the first reading after a start always does, since the cloud's
 * picture may be anything.
 */
export class OutboxSensorReadings implements SensorReadings {
  private readonly live = new Map<string, Sensors>();
  /** What the cloud has been told (or will be, once the outbox drains), per device. */
  private readonly told = new Map<string, Sensors>();
  /** Devices whose report the store refused (full): told again, as they read then, by `retryUntold`. */
  private readonly untold = new Map<string, { device: MappedDevice; cause: SensorCause }>();
  /** Doors the readings show open, since when (monotonic). */
  private readonly opened = new Map<string, number>();

  constructor(
    private readonly outbox: Outbox,
    private readonly clock: Clock,
    /** Hears every latch reading, whatever its cause (a locker seen unlocked is no longer parked). */
    private readonly onLatch?: (deviceId: string, latch: LatchState) => void,
    private readonly monotonic: Monotonic = systemMonotonic,
  ) {}

  get(deviceId: string): Sensors {
    return this.live.get(deviceId) ?? EMPTY;
  }

  openSince(deviceId: string): number | null {
    return this.opened.get(deviceId) ?? null;
  }

  private merge(deviceId: string, reading: Reading): Sensors {
    const next = { ...this.get(deviceId), read_at: this.clock.now().toISOString() };
    for (const f of FIELDS)
      if (reading[f] !== undefined && reading[f] !== null) next[f] = reading[f] as never;
    this.live.set(deviceId, next);
    if (next.door_open !== true) this.opened.delete(deviceId);
    else if (!this.opened.has(deviceId)) this.opened.set(deviceId, this.monotonic.nowMs());
    if (reading.latch) this.onLatch?.(deviceId, reading.latch);
    return next;
  }

  /** Forgets a device (it left the device map, or its wiring changed): its next reading is reported. */
  forget(deviceId: string): void {
    this.live.delete(deviceId);
    this.opened.delete(deviceId);
    this.told.delete(deviceId);
  }

  /**
   * Records a reading and reports it when it tells the cloud something new (or `always`). Returns whether
   * a report went into the outbox. Inside a caller's transaction the report commits with it.
   */
  record(
    device: MappedDevice,
    reading: Reading,
    cause: SensorCause,
    opts: { detail?: string; always?: boolean } = {},
  ): boolean {
    // Told once the report is in the outbox. One the store refused (full), here or in what a latch reading
    // sets off (the parked card it clears), is told with the next reading, or by `retryUntold` once the
    // store has room, whichever comes first.
    try {
      return this.report(device, reading, cause, opts);
    } catch (err) {
      this.untold.set(device.device_id, { device, cause });
      throw err;
    }
  }

  private report(
    device: MappedDevice,
    reading: Reading,
    cause: SensorCause,
    opts: { detail?: string; always?: boolean },
  ): boolean {
    const next = this.merge(device.device_id, reading);
    const told = this.told.get(device.device_id);
    const news = !told || FIELDS.some((f) => next[f] !== null && next[f] !== told[f]);
    if (!news && !opts.always) return false;
    this.outbox.append({
      type: "device_state",
      device_id: device.device_id,
      ...(next.latch ? { lock_state: next.latch === "locked" ? "LOCKED" : "UNLOCKED" } : {}),
      ...(next.door_open !== null ? { door_open: next.door_open } : {}),
      ...(next.item_present !== null ? { item_present: next.item_present } : {}),
      cause,
      detail: opts.detail ?? "",
    });
    this.untold.delete(device.device_id);
    this.told.set(device.device_id, next);
    return true;
  }

  /**
   * Reports, as they read now, the devices whose report the store refused, when that is still news; stops
   * at the first the store still refuses. Without it a reading lost to a full disk (a start's, say) stayed
   * untold until the latch moved again or the periodic sweep read it, and the cloud kept the old state.
   */
  retryUntold(): void {
    for (const [id, { device, cause }] of this.untold) {
      // The latch again, so what a reading of it sets off (a parked card cleared) is done this time.
      const latch = this.get(id).latch;
      try {
        this.record(device, latch ? { latch } : {}, cause);
      } catch {
        return;
      }
      this.untold.delete(id);
    }
  }

  /**
   * Records what a command's own report already carries to the cloud (the latch after a lock or
   * unlock), so it is not reported a second time.
   */
  note(device: MappedDevice, reading: Reading): void {
    // Told before the merge: what a latch reading sets off may fail on a full store, the report went all the same.
    const told = this.told.get(device.device_id);
    const latch = reading.latch ?? this.get(device.device_id).latch;
    if (told) this.told.set(device.device_id, { ...told, latch });
    this.merge(device.device_id, reading);
  }
}
