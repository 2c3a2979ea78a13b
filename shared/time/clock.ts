/** Time is injected (STYLE rule 6): anything that waits or reads "now" takes a Clock. */
export type TimerHandle = { readonly id: number };

export interface Clock {
  now(): Date;
  setTimer(ms: number, fn: () => void): TimerHandle;
  clearTimer(handle: TimerHandle): void;
}

/**
 * Elapsed time that only moves forward, whatever happens to the wall clock (NTP steps, an RTC reset, a
 * technician's `date`): what the gateway measures intervals with when the interval decides something.
 * Milliseconds from an arbitrary origin; only differences mean anything.
 */
export interface Monotonic {
  nowMs(): number;
  /**
   * The origin's identity: instants read by two processes with the same `boot` compare (Linux's
   * CLOCK_MONOTONIC runs from the host's boot, so a restarted daemon can date what its predecessor marked).
   * Absent: they compare within this process only.
   */
  readonly boot?: string;
}

/** RFC 3339 in UTC with milliseconds: sortable as text, so both stores compare timestamps alike. */
export function iso(d: Date): string {
  return d.toISOString();
}
