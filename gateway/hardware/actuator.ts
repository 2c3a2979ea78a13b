import type { Clock } from "../../shared/clock.ts";
import type { LatchResult } from "../../shared/protocol/lock-bus/constants.ts";
import type { BoardMessage } from "../../shared/protocol/lock-bus/messages.ts";
import type { MappedDevice } from "../devices/device-registry.ts";
import { BusError, type LockBusClient } from "../lock-bus/lock-bus-client.ts";
import type { GpioBank } from "../ports.ts";

export type Action = "lock" | "unlock" | "status" | "power_cycle";

export type Outcome = { ok: boolean; reason: string; lockState: "LOCKED" | "UNLOCKED" | null };

const RESULT_REASON: Record<LatchResult, string> = {
  ok: "",
  jammed: "latch jammed: the lock could not engage",
  door_open: "the door is open: close it before locking",
  no_power: "the lock has no power",
  timeout: "the latch did not reach its position in time",
};

const lockStateOf = (latch: "locked" | "unlocked") => (latch === "locked" ? "LOCKED" : "UNLOCKED");

/**
 * Moves one device's hardware (flow 1, step 4): a lock-bus channel for lockers, docks and bus-wired
 * door locks; a pulse on the door's strike line for GPIO-wired doors.
 */
export class Actuator {
  constructor(
    private readonly busFor: (device: MappedDevice) => LockBusClient | null,
    private readonly gpio: GpioBank,
    private readonly clock: Clock,
    private readonly doorReleaseS: number,
  ) {}

  async run(device: MappedDevice, action: Action): Promise<Outcome> {
    const isDoor = device.type === "BIKE_HOUSE_DOOR" || device.type === "DOOR";
    if (!device.bus) {
      if (isDoor && action === "unlock") return this.pulseStrike(device);
      return {
        ok: false,
        reason: `device ${device.alias} is not wired to this gateway's lock bus`,
        lockState: null,
      };
    }
    const bus = this.busFor(device);
    if (!bus) return { ok: false, reason: `no bus has lock board ${device.bus.board}`, lockState: null };
    const { board: addr, channel } = device.bus;
    try {
      switch (action) {
        case "lock":
          return this.result(await bus.request({ kind: "lock", addr, channel }));
        case "unlock":
          return this.result(
            await bus.request({ kind: "unlock", addr, channel, holdS: isDoor ? this.doorReleaseS : 0 }),
          );
        case "status":
          return this.result(await bus.request({ kind: "status", addr, channel }));
        case "power_cycle":
          await bus.request({ kind: "power", addr, channel, on: false });
          await new Promise<void>((r) => this.clock.setTimer(1_000, r));
          await bus.request({ kind: "power", addr, channel, on: true });
          return this.result(await bus.request({ kind: "status", addr, channel }));
      }
    } catch (err) {
      if (err instanceof BusError) return { ok: false, reason: err.message, lockState: null };
      throw err;
    }
  }

  private result(reply: BoardMessage): Outcome {
    if (reply.kind === "status_reply") {
      const ok = !reply.jammed;
      return { ok, reason: ok ? "" : RESULT_REASON.jammed, lockState: lockStateOf(reply.latch) };
    }
    if (reply.kind === "lock_result" || reply.kind === "unlock_result") {
      return {
        ok: reply.result === "ok",
        reason: RESULT_REASON[reply.result],
        lockState: lockStateOf(reply.latch),
      };
    }
    return { ok: false, reason: `unexpected reply ${reply.kind}`, lockState: null };
  }

  private pulseStrike(device: MappedDevice): Outcome {
    let line: ReturnType<GpioBank["line"]>;
    try {
      line = this.gpio.line(`door_strike:${device.alias}`);
    } catch {
      return { ok: false, reason: `no door strike line configured for ${device.alias}`, lockState: null };
    }
    line.write(true);
    this.clock.setTimer(this.doorReleaseS * 1000, () => line.write(false));
    return { ok: true, reason: "", lockState: "UNLOCKED" };
  }
}
