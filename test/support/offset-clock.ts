import { performance } from "node:perf_hooks";
import type { Clock, Monotonic, TimerHandle } from "../../shared/time/clock.ts";

let boots = 0;

/**
 * A Clock for end-to-end tests whose parts talk over real sockets: timers are real (so I/O timeouts
 * still work), but `now` can jump ahead, which is how a test crosses a 30 s deadline or a 2 h LONG_DEAD
 * without waiting for it. A jump moves the wall clock only: its monotonic time is the process's, as a
 * host's clock being set (or a day off from the start) leaves elapsed time alone.
 */
export class OffsetClock implements Clock, Monotonic {
  /** One boot per clock: a store reopened on the same clock is a daemon restarted on the same host boot. */
  readonly boot = `boot-${++boots}`;
  private offsetMs = 0;
  private monotonicOffsetMs = 0;
  private nextId = 1;
  private readonly timers = new Map<number, ReturnType<typeof setTimeout>>();

  now(): Date {
    return new Date(Date.now() + this.offsetMs);
  }

  nowMs(): number {
    return performance.now() + this.monotonicOffsetMs;
  }

  /** Time passes: the wall clock and elapsed time move on together (a gateway offline for two hours). */
  advance(ms: number): void {
    this.offsetMs += ms;
    this.monotonicOffsetMs += ms;
  }

  /** The wall clock is set (NTP, a technician, an RTC reset): elapsed time does not move. */
  jump(ms: number): void {
    this.offsetMs += ms;
  }

  setTimer(ms: number, fn: () => void): TimerHandle {
    const id = this.nextId++;
    const t = setTimeout(() => {
      this.timers.delete(id);
      fn();
    }, ms);
    this.timers.set(id, t);
    return { id };
  }

  clearTimer(handle: TimerHandle): void {
    const t = this.timers.get(handle.id);
    if (t) clearTimeout(t);
    this.timers.delete(handle.id);
  }
}
