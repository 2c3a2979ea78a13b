import type { Logger } from "pino";
import type { PowerSaveStrategy, SleepState } from "../../shared/domain/device-types.ts";
import type { SensorCause } from "../../shared/wire/messages.ts";
import type { MappedDevice, Outbox, SleepStates } from "../ports.ts";

/** The refusal of a command for a LOCAL_WAKEUP device in deep sleep (spec: power_save_strategy). */
export const DEEP_SLEEP_REASON =
  "device is in deep sleep (LOCAL_WAKEUP): it wakes on a local interaction such as an RFID tap";

export const strategyOf = (device: MappedDevice): PowerSaveStrategy => device.power_save_strategy ?? "NONE";

/**
 * The SleepStates port, reporting through the outbox (spec: Device `sleep_state`). The hardware tells: a
 * board announces a channel's sleep and wake-up (docs/hardware-protocol.md, "Power save"), any answer or
 * event from a channel means it is awake, and a LOCAL_WAKEUP channel that stays silent while its board
 * answers is in deep sleep. Each change goes up the durable outbox as a `device_state` carrying
 * `sleep_state`, so the cloud's device record follows; the first state known after a start always does,
 * since the cloud may still show one from before. A NONE device that only ever answers is never reported.
 */
export class OutboxSleepStates implements SleepStates {
  private readonly states = new Map<string, SleepState>();
  private readonly changed = new Map<string, number>();

  constructor(
    private readonly outbox: Pick<Outbox, "append">,
    private readonly log: Logger,
    /** Extra time a REMOTE_WAKEUP device may take to wake up and answer (config `remote_wakeup_ms`). */
    private readonly remoteWakeupMs: number,
  ) {}

  get(deviceId: string): SleepState | null {
    return this.states.get(deviceId) ?? null;
  }

  record(device: MappedDevice, state: SleepState, cause: SensorCause): void {
    const known = this.states.get(device.device_id);
    if (known === state) return;
    if (known === undefined && state === "" && strategyOf(device) === "NONE") return;
    this.states.set(device.device_id, state);
    this.changed.set(device.device_id, this.changes(device.device_id) + 1);
    this.outbox.append({
      type: "device_state",
      device_id: device.device_id,
      sleep_state: state,
      cause,
      detail: "",
    });
    this.log.info(
      { device: device.alias, sleep_state: state || "awake", was: known ?? "unknown", cause },
      "device sleep state",
    );
  }

  changes(deviceId: string): number {
    return this.changed.get(deviceId) ?? 0;
  }

  refusal(device: MappedDevice): string | null {
    const asleep =
      strategyOf(device) === "LOCAL_WAKEUP" && this.states.get(device.device_id) === "DEEP_SLEEP";
    return asleep ? DEEP_SLEEP_REASON : null;
  }

  graceMs(device: MappedDevice): number {
    return strategyOf(device) === "REMOTE_WAKEUP" ? this.remoteWakeupMs : 0;
  }

  forget(deviceId: string): void {
    this.states.delete(deviceId);
  }
}
