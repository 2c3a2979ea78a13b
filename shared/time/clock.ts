/** Time is injected (STYLE rule 6): anything that waits or reads "now" takes a Clock. */
export type TimerHandle = { readonly id: number };

export interface Clock {
  now(): Date;
  setTimer(ms: number, fn: () => void): TimerHandle;
  clearTimer(handle: TimerHandle): void;
}

/** RFC 3339 in UTC with milliseconds: sortable as text, so both stores compare timestamps alike. */
export function iso(d: Date): string {
  return d.toISOString();
}
