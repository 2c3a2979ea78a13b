import type { Clock } from "../../shared/time/clock.ts";
import { LruMap } from "./lru-map.ts";

export type RatePolicy = {
  /** Requests a key may make at once after a quiet time. */
  burst: number;
  /** Requests a key regains per minute. */
  perMinute: number;
};

type Bucket = { tokens: number; at: number };

/**
 * A token bucket per key (an operator, a client address): up to `burst` requests at once, then
 * `perMinute` spread evenly. Memory is bounded by an LRU of `capacity` keys; a key pushed out starts
 * again with a full bucket, which only a flood of other keys can cause. Per process, like the
 * failure limiter (docs/decisions/replicas.md).
 */
export function createRequestLimiter(opts: { clock: Clock; policy: RatePolicy; capacity?: number }) {
  const { burst, perMinute } = opts.policy;
  const msPerToken = 60_000 / perMinute;
  const buckets = new LruMap<string, Bucket>(opts.capacity ?? 100_000);

  function refill(key: string, now: number): Bucket {
    const b = buckets.get(key) ?? { tokens: burst, at: now };
    const gained = Math.max(0, now - b.at) / msPerToken;
    const bucket = { tokens: Math.min(burst, b.tokens + gained), at: now };
    buckets.set(key, bucket);
    return bucket;
  }

  return {
    /** Seconds until `key` may make a request, or 0 when it may now. Takes nothing. */
    waitS(key: string): number {
      const now = opts.clock.now().getTime();
      const b = refill(key, now);
      return b.tokens >= 1 ? 0 : Math.max(1, Math.ceil(((1 - b.tokens) * msPerToken) / 1000));
    },

    /** Counts one request of `key` (call after waitS said 0). */
    take(key: string): void {
      const b = refill(key, opts.clock.now().getTime());
      b.tokens = Math.max(0, b.tokens - 1);
    },

    /** Keys held, for tests. */
    size(): number {
      return buckets.size;
    },
  };
}

export type RequestLimiter = ReturnType<typeof createRequestLimiter>;
