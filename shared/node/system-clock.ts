import type { Clock } from "../time/clock.ts";

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
