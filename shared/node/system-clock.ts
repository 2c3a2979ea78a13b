import { readFileSync } from "node:fs";
import type { Clock, Monotonic } from "../time/clock.ts";

/** The real clock: wall time and Node timers that never keep the process alive on their own. */
export const systemClock: Clock = {
  now: () => new Date(),
  setTimer(ms, fn) {
    const t = setTimeout(fn, ms);
    t.unref?.();
    return { id: Number(t[Symbol.toPrimitive]()) };
  },
  clearTimer(handle) {
    clearTimeout(handle.id);
  },
};

/**
 * The host's monotonic clock (CLOCK_MONOTONIC, through hrtime): it never steps back when the wall clock is
 * set, and runs from the boot, so instants kept by a daemon killed since still compare on the same boot.
 */
export const systemMonotonic: Monotonic = {
  nowMs: () => Number(process.hrtime.bigint()) / 1e6,
  // Read when first asked (the gateway's outbox), not by every process that imports the clock.
  get boot() {
    bootId ??= readBootId();
    return bootId ?? undefined;
  },
};

let bootId: string | null | undefined;

/** The kernel's id of this boot; null where there is none (not Linux): instants then stay per process. */
function readBootId(): string | null {
  try {
    return readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim() || null;
  } catch {
    return null;
  }
}
