import type { LatchResult } from "../../../shared/protocol/lock-bus/constants.ts";
import type { BoardMessage } from "../../../shared/protocol/lock-bus/messages.ts";
import { BusError, type LockBusClient } from "../../lock-bus/lock-bus-client.ts";
import type { Action, Actuator, Clock, MappedDevice, Outcome } from "../../ports.ts";
import type { GpioDoors } from "./gpio-doors.ts";

const RESULT_REASON: Record<LatchResult, string> = {
  ok: "",
  jammed: "latch jammed: the lock could not engage",
  door_open: "the door is open: close it before locking",
  no_power: "the lock has no power",
  timeout: "the latch did not reach its position in time",
};

const lockStateOf = (latch: "locked" | "unlocked") => (latch === "locked" ? "LOCKED" : "UNLOCKED");

const failed = (reason: string): Outcome => ({ ok: false, reason, lockState: null, sensors: null });

/**
 * The Actuator port on the site's hardware (flow 1, step 4): a lock-bus channel for lockers, docks and
 * bus-wired door locks; the strike and contact lines for GPIO-wired doors.
 */
export class HardwareActuator implements Actuator {
  constructor(
    private readonly busFor: (device: MappedDevice) => LockBusClient | null,
    private readonly doors: GpioDoors,
    private readonly clock: Clock,
    private readonly doorReleaseS: number,
    /** Extra time a device may take to answer (a REMOTE_WAKEUP device wakes first); none by default. */
    private readonly graceMs: (device: MappedDevice) => number = () => 0,
  ) {}

  async run(device: MappedDevice, action: Action, opts?: { stillWanted?: () => boolean }): Promise<Outcome> {
    const isDoor = device.type === "BIKE_HOUSE_DOOR" || device.type === "DOOR";
    if (!device.bus) return this.gpioDoor(device, action);
    const bus = this.busFor(device);
    if (!bus) return failed(`no bus has lock board ${device.bus.board}`);
    const { board: addr, channel } = device.bus;
    const grace = { graceMs: this.graceMs(device) };
    const move = { ...grace, stillWanted: opts?.stillWanted };
    try {
      switch (action) {
        case "lock":
          return this.result(await bus.request({ kind: "lock", addr, channel }, move));
        case "unlock":
          return this.result(
            await bus.request({ kind: "unlock", addr, channel, holdS: isDoor ? this.doorReleaseS : 0 }, move),
          );
        case "status":
          return this.result(await bus.request({ kind: "status", addr, channel }, grace));
        case "power_cycle":
          await bus.request({ kind: "power", addr, channel, on: false }, grace);
          await new Promise<void>((r) => this.clock.setTimer(1_000, r));
          await bus.request({ kind: "power", addr, channel, on: true }, grace);
          return this.result(await bus.request({ kind: "status", addr, channel }, grace));
      }
    } catch (err) {
      if (!(err instanceof BusError)) throw err;
      // A movement whose answer never came may still have happened: read where the latch is, so the
      // report carries the truth and the cloud settles on it (a LOCK is never simply sent again).
      const unanswered = err.failure.reason === "no_ack" || err.failure.reason === "no_reply";
      if (unanswered && (action === "lock" || action === "unlock")) {
        const reading = await this.readAfter(bus, addr, channel, grace.graceMs);
        if (reading) return { ...reading, ok: false, reason: err.message };
      }
      return { ...failed(err.message), unanswered };
    }
  }

  private async readAfter(
    bus: LockBusClient,
    addr: number,
    channel: number,
    graceMs: number,
  ): Promise<Outcome | null> {
    try {
      return this.result(await bus.request({ kind: "status", addr, channel }, { graceMs }));
    } catch {
      return null;
    }
  }

  private result(reply: BoardMessage): Outcome {
    if (reply.kind === "status_reply") {
      const ok = !reply.jammed;
      return {
        ok,
        reason: ok ? "" : RESULT_REASON.jammed,
        lockState: lockStateOf(reply.latch),
        sensors: { latch: reply.latch, door_open: reply.doorOpen, item_present: reply.itemPresent },
      };
    }
    if (reply.kind === "lock_result" || reply.kind === "unlock_result") {
      return {
        ok: reply.result === "ok",
        reason: RESULT_REASON[reply.result],
        lockState: lockStateOf(reply.latch),
        sensors: { latch: reply.latch, ...(reply.result === "door_open" ? { door_open: true } : {}) },
      };
    }
    return failed(`unexpected reply ${reply.kind}`);
  }

  private gpioDoor(device: MappedDevice, action: Action): Outcome {
    if (!this.doors.has(device.device_id))
      return failed(
        `device ${device.alias} is wired neither to this gateway's lock bus nor to a door strike`,
      );
    if (action === "unlock") this.doors.release(device.device_id);
    else if (action === "lock" || action === "power_cycle")
      return failed(`door ${device.alias} locks by itself when it closes; it takes only unlock`);
    const sensors = this.doors.read(device.device_id);
    return {
      ok: true,
      reason: "",
      lockState: sensors?.latch ? lockStateOf(sensors.latch) : null,
      sensors,
    };
  }
}
