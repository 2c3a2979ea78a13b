import { performance } from "node:perf_hooks";
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

/** The process's monotonic clock: performance.now() never steps back when the wall clock is set. */
export const systemMonotonic: Monotonic = { nowMs: () => performance.now() };
