import { randomInt } from "node:crypto";
import type { Clock } from "../../shared/time/clock.ts";
import { LruMap } from "../auth/lru-map.ts";

/** Recent verification times kept per operator. */
const SAMPLES = 16;

/**
 * Paces the answer to a sign-in whose service_user_id nobody has, so it takes as long as one the operator
 * refuses: a refusal costs a round trip to the operator's server, and answering an unknown id at once
 * would tell an anonymous caller which ids exist. Each operator's recent sign-in verification times (on
 * the injected clock, answered ones only) are kept, and an unknown id waits one of them picked at random:
 * the same distribution, not just the same mean. Before any verification there is nothing to tell apart,
 * and none waits. Memory: `SAMPLES` numbers for each of up to `capacity` operators.
 */
export function createSignInPacing(deps: { clock: Clock; maxMs: number; capacity?: number }) {
  const times = new LruMap<string, number[]>(deps.capacity ?? 10_000);
  return {
    /** One answered sign-in verification of the operator took `ms`. */
    record(operatorId: string, ms: number): void {
      const kept = times.get(operatorId) ?? [];
      kept.push(Math.max(0, ms));
      if (kept.length > SAMPLES) kept.shift();
      times.set(operatorId, kept);
    },

    /** Resolves after as long as one of the operator's recent verifications took. */
    wait(operatorId: string): Promise<void> {
      const kept = times.get(operatorId);
      const ms = kept && kept.length > 0 ? Math.min(deps.maxMs, kept[randomInt(kept.length)] as number) : 0;
      if (ms <= 0) return Promise.resolve();
      return new Promise((resolve) => {
        deps.clock.setTimer(ms, resolve);
      });
    },
  };
}

export type SignInPacing = ReturnType<typeof createSignInPacing>;
