/** When a failed webhook is tried again, and when it is given up (docs/decisions/webhooks.md). */

/** The first retry waits this long; each further one twice the one before. */
export const FIRST_RETRY_MS = 5_000;
/** No wait is longer than this, so a receiver back after an outage is found within the hour. */
export const MAX_RETRY_MS = 3_600_000;
/** A message not delivered within a day of entering the queue is dead (kept for the log and a replay). */
export const DEAD_AFTER_MS = 24 * 3_600_000;

/** The wait after the `attempts`-th failed attempt (1-based): 5 s, 10 s, 20 s … capped at 1 h. */
export function retryDelayMs(attempts: number): number {
  const n = Math.max(1, attempts);
  // 2^30 × 5 s is far past the cap; stop doubling before the number grows without need.
  return Math.min(FIRST_RETRY_MS * 2 ** Math.min(n - 1, 30), MAX_RETRY_MS);
}

export type AfterFailure = { kind: "retry"; at: Date } | { kind: "dead" };

/**
 * What follows a failed attempt: another one after the backoff, or dead once the message has been queued
 * for a day. The last retry is pulled in to the end of the day, so a message always gets a try then.
 */
export function afterFailure(o: { attempts: number; queuedAt: Date; now: Date }): AfterFailure {
  const deadline = o.queuedAt.getTime() + DEAD_AFTER_MS;
  if (o.now.getTime() >= deadline) return { kind: "dead" };
  return { kind: "retry", at: new Date(Math.min(o.now.getTime() + retryDelayMs(o.attempts), deadline)) };
}
