import type { Clock } from "../../shared/time/clock.ts";
import { LruMap } from "./lru-map.ts";

export type FailurePolicy = {
  /** Failures within `windowMs` that block a key. */
  max: number;
  windowMs: number;
  /**
   * Without backoff a blocked key waits until its oldest counted failure leaves the window. With
   * backoff, once the ceiling is reached every further failure blocks the key for `baseMs`, doubling
   * up to `maxMs`, until the key has gone `forgetMs` without a failure.
   */
  backoff?: { baseMs: number; maxMs: number; forgetMs: number };
};

type Entry = {
  /** The newest `max` failure times within the window, oldest first. */
  failures: number[];
  lastFailureAt: number;
  /** How often the ceiling was reached; above 0 the key is an offender. */
  strikes: number;
  blockedUntil: number;
};

/** Enough doublings to reach any sensible `maxMs` from 1 ms. */
const MAX_STRIKES = 64;

/**
 * Counts failed authentications per key (a client address, a client id), so guessing a secret is
 * slowed to a crawl (S8) while other callers are unaffected. Per process: with several replicas each
 * enforces its own share (docs/decisions/replicas.md).
 *
 * Memory is bounded without ever forgetting everyone: keys still under the ceiling live in one LRU,
 * keys that reached it in another, so a flood of new keys pushes out only other new keys and a
 * blocked offender stays blocked.
 */
export function createFailureLimiter(opts: {
  clock: Clock;
  policy: FailurePolicy;
  /** Keys under the ceiling kept at most. */
  capacity?: number;
  /** Keys that reached the ceiling kept at most. */
  offenderCapacity?: number;
}) {
  const { policy } = opts;
  const suspects = new LruMap<string, Entry>(opts.capacity ?? 100_000);
  const offenders = new LruMap<string, Entry>(opts.offenderCapacity ?? 10_000);
  const quietMs = policy.backoff?.forgetMs ?? policy.windowMs;

  function lookup(key: string, now: number): Entry | undefined {
    const entry = offenders.get(key) ?? suspects.get(key);
    if (entry && now >= entry.blockedUntil && now - entry.lastFailureAt >= quietMs) {
      offenders.delete(key);
      suspects.delete(key);
      return undefined;
    }
    return entry;
  }

  function block(entry: Entry, now: number) {
    entry.strikes = Math.min(entry.strikes + 1, MAX_STRIKES);
    const backoff = policy.backoff;
    entry.blockedUntil = backoff
      ? now + Math.min(backoff.baseMs * 2 ** (entry.strikes - 1), backoff.maxMs)
      : // Sliding window: blocked until the oldest of the last `max` failures leaves it.
        (entry.failures[0] ?? now) + policy.windowMs;
  }

  return {
    /** Seconds to wait before trying again, or 0 when the key is not blocked. */
    retryAfterS(key: string): number {
      const now = opts.clock.now().getTime();
      const entry = lookup(key, now);
      return entry && entry.blockedUntil > now ? Math.ceil((entry.blockedUntil - now) / 1000) : 0;
    },

    fail(key: string): void {
      const now = opts.clock.now().getTime();
      const entry = lookup(key, now) ?? { failures: [], lastFailureAt: now, strikes: 0, blockedUntil: 0 };
      entry.failures = entry.failures.filter((t) => t > now - policy.windowMs);
      entry.failures.push(now);
      if (entry.failures.length > policy.max) entry.failures.shift();
      entry.lastFailureAt = now;
      const escalating = policy.backoff !== undefined && entry.strikes > 0;
      if (escalating || entry.failures.length >= policy.max) block(entry, now);
      if (entry.strikes > 0) {
        suspects.delete(key);
        offenders.set(key, entry);
      } else {
        suspects.set(key, entry);
      }
    },

    /** Keys held, for tests and metrics. */
    size(): number {
      return suspects.size + offenders.size;
    },
  };
}
