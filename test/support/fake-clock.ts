import type { Clock, Monotonic, TimerHandle } from "../../shared/time/clock.ts";

let boots = 0;

/**
 * A Clock for tests: time moves only when advance() is called, firing due timers in order. Its monotonic
 * time moves with it; setWall() moves the wall clock alone, as a host's clock being set does.
 */
export class FakeClock implements Clock, Monotonic {
  /** One boot per clock: a store reopened on the same clock is a daemon restarted on the same host boot. */
  readonly boot = `boot-${++boots}`;
  private t: number;
  /** Monotonic time: advanced with `t`, untouched by setWall(). */
  private mono = 0;
  private nextId = 1;
  private timers = new Map<number, { at: number; fn: () => void }>();

  constructor(start: string | Date = "2026-01-15T10:00:00.000Z") {
    this.t = new Date(start).getTime();
  }

  now(): Date {
    return new Date(this.t);
  }

  nowMs(): number {
    return this.mono;
  }

  /** Sets the wall clock (NTP stepping it, an RTC reset) without time passing; timers keep their due time. */
  setWall(ms: number): void {
    const delta = ms - this.t;
    this.t = ms;
    for (const timer of this.timers.values()) timer.at += delta;
  }

  setTimer(ms: number, fn: () => void): TimerHandle {
    const id = this.nextId++;
    this.timers.set(id, { at: this.t + Math.max(0, ms), fn });
    return { id };
  }

  clearTimer(handle: TimerHandle): void {
    this.timers.delete(handle.id);
  }

  /** How many timers wait for time to move (a test can tell that code under test has started waiting). */
  pendingTimers(): number {
    return this.timers.size;
  }

  /** Moves time forward, firing each timer that falls due at its own instant. */
  advance(ms: number): void {
    const end = this.t + ms;
    for (;;) {
      const due = [...this.timers.entries()]
        .filter(([, x]) => x.at <= end)
        .sort((a, b) => a[1].at - b[1].at)[0];
      if (!due) break;
      this.timers.delete(due[0]);
      const at = Math.max(this.t, due[1].at);
      this.mono += at - this.t;
      this.t = at;
      due[1].fn();
    }
    this.mono += end - this.t;
    this.t = end;
  }
}
