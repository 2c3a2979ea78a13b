import type { Clock } from "../../shared/clock.ts";

/**
 * Counts failed authentications per key (client IP, client id) in a sliding window, so guessing a
 * secret is slowed to a crawl (S8) while other callers are unaffected. Per process: with several
 * replicas each enforces its own share (docs/decisions.md).
 */
export function createFailureLimiter(opts: { clock: Clock; max: number; windowMs: number }) {
  const failures = new Map<string, number[]>();

  function recent(key: string, now: number): number[] {
    const list = (failures.get(key) ?? []).filter((t) => t > now - opts.windowMs);
    if (list.length === 0) failures.delete(key);
    else failures.set(key, list);
    return list;
  }

  return {
    /** Seconds to wait before trying again, or 0 when the keys are not blocked. */
    retryAfterS(keys: string[]): number {
      const now = opts.clock.now().getTime();
      let wait = 0;
      for (const key of keys) {
        const list = recent(key, now);
        const oldest = list[0];
        if (list.length >= opts.max && oldest !== undefined) {
          wait = Math.max(wait, Math.ceil((oldest + opts.windowMs - now) / 1000));
        }
      }
      return wait;
    },
    fail(keys: string[]) {
      const now = opts.clock.now().getTime();
      for (const key of keys) failures.set(key, [...recent(key, now), now]);
      if (failures.size > 100_000) failures.clear(); // bounded memory under a spray of keys
    },
  };
}
