/**
 * The simulator's view of time (STYLE rule 6: time is injected). Structurally the shared Clock's timer
 * half, so a test can hand a board the same fake clock it gives the gateway; hardware-sim may not import
 * shared/time/clock.ts, hence the local shape.
 */
export interface SimTimers {
  setTimer(ms: number, fn: () => void): unknown;
  clearTimer(handle: unknown): void;
}

/**
 * Real timers, unref'd: a pending hold or ALIVE timer must not keep a test run or a finished process
 * alive; the links and socat children are what keep the standalone simulator running.
 */
export const realTimers: SimTimers = {
  setTimer(ms, fn) {
    const t = setTimeout(fn, ms);
    t.unref();
    return t;
  },
  clearTimer(handle) {
    clearTimeout(handle as NodeJS.Timeout);
  },
};

/** Timers owned by one device, so a power loss or close() can cancel everything it had pending. */
export class TimerSet {
  private readonly live = new Set<unknown>();

  constructor(private readonly timers: SimTimers = realTimers) {}

  /** Runs fn after ms; returns a cancel function. */
  after(ms: number, fn: () => void): () => void {
    const handle = this.timers.setTimer(ms, () => {
      this.live.delete(handle);
      fn();
    });
    this.live.add(handle);
    return () => {
      if (this.live.delete(handle)) this.timers.clearTimer(handle);
    };
  }

  cancelAll(): void {
    for (const h of this.live) this.timers.clearTimer(h);
    this.live.clear();
  }
}
