import type { Clock, TimerHandle } from "../../shared/time/clock.ts";
import type { Status } from "../../shared/wire/messages.ts";

/**
 * How long a gateway's `offline` waits before it is applied: long enough for a gateway already reconnecting
 * to announce its new session (CONNECT, SUBSCRIBE, `online`: a few round trips on a mobile link), short
 * beside the 30 s of silence that makes its devices DEAD without it.
 */
export const OFFLINE_GRACE_MS = 5_000;

/**
 * Holds each gateway's `offline` that names its session (the Last Will, or its own on a graceful stop) for
 * the grace on the injected clock, then applies it as of its arrival. A stall ends a session with its held
 * heartbeats and then its Will, published by the broker while the new session's `online` is a round trip
 * behind: applied at once, that Will took the devices the heartbeats had just brought back down again. Held,
 * it meets the store's session rule after the new `online` (gateway-repository.ts `setOffline`), so it
 * changes nothing; one whose session is still the last announced online is applied. The rule is in the
 * store, so it holds across replicas whichever heard the `online`. The MQTT 5 Will Delay Interval
 * (MQTT 5.0 §3.1.3.2.2) does this in the broker; the gateways speak 3.1.1, which has none.
 */
export function createOfflineGrace(deps: {
  clock: Clock;
  /** Applies the status as of `receivedAt`; never rejects. */
  apply: (st: Status, receivedAt: Date) => Promise<void>;
}) {
  const { clock, apply } = deps;
  // Each is judged alone: a Will published late may arrive after the newer session's own offline.
  const waiting = new Set<TimerHandle>();
  const applying = new Set<Promise<void>>();

  return {
    hold(st: Status): void {
      const receivedAt = clock.now();
      const timer = clock.setTimer(OFFLINE_GRACE_MS, () => {
        waiting.delete(timer);
        const p = apply(st, receivedAt).finally(() => applying.delete(p));
        applying.add(p);
      });
      waiting.add(timer);
    },

    /**
     * Drops what waits (a stopping process: a retained Will is delivered again on the next subscribe, and
     * silence makes the devices DEAD anyway) and gives what is being applied, to wait for.
     */
    stop(): Promise<void>[] {
      for (const timer of waiting) clock.clearTimer(timer);
      waiting.clear();
      return [...applying];
    },
  };
}
