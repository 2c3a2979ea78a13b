import type { DeviceTimeouts } from "../../shared/domain/device-machine.ts";
import type { PowerSaveStrategy } from "../../shared/domain/device-types.ts";

export type CommandTimeoutConfig = DeviceTimeouts & {
  /** Extra delivery time for devices the backend must wake first (REMOTE_WAKEUP, LOCAL_WAKEUP). */
  wakeupExtraMs: number;
  /** A second lock/unlock on a device within this window answers 429 (spec issue: 3 s)… */
  throttleMs: number;
  /** …or within this one for devices with a power-save strategy (15 s). */
  throttlePowerSaveMs: number;
};

export const DEFAULT_COMMAND_TIMEOUTS: CommandTimeoutConfig = {
  deliveryMs: 30_000,
  hardwareMs: 30_000,
  bookingMs: 60 * 60 * 1000,
  doorReleaseMs: 10_000,
  wakeupExtraMs: 30_000,
  throttleMs: 3_000,
  throttlePowerSaveMs: 15_000,
};

export function timeoutsFor(cfg: CommandTimeoutConfig, strategy: PowerSaveStrategy): DeviceTimeouts {
  return strategy === "NONE" ? cfg : { ...cfg, deliveryMs: cfg.deliveryMs + cfg.wakeupExtraMs };
}

export function throttleWindowMs(cfg: CommandTimeoutConfig, strategy: PowerSaveStrategy): number {
  return strategy === "NONE" ? cfg.throttleMs : cfg.throttlePowerSaveMs;
}
