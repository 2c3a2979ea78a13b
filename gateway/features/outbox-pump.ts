import type { Logger } from "pino";
import type { Monotonic } from "../../shared/time/clock.ts";
import type { BrokerLink, Clock, Outbox, TimerHandle } from "../ports.ts";
import { type CloudClock, SESSION_SYNC_WAIT_MS } from "../time/cloud-clock.ts";

/** A cloud that acknowledges nothing is asked again at most this often (doubling from `resendAfterMs`). */
const MAX_RESEND_AFTER_MS = 120_000;

/**
 * Moves the outbox to the cloud (ARCHITECTURE: wire principles): command progress (flow 1), site events
 * (flow 5) and sensor reports (flow 6). Publishes rows in sequence order with QoS 1, deletes a row only
 * when the cloud's `ack` names it, and sends again whatever stays unacknowledged for `resendAfterMs` or
 * was in flight when the connection dropped (the cloud ignores repeats by outbox identity and seq). Each
 * resend that brings no ack doubles the wait before the next, up to two minutes: a cloud slow under load
 * is not buried under copies of what it has not yet applied (issue 10, fleet). An ack naming another
 * outbox identity (meant for the store this gateway had before its state was lost) confirms nothing here.
 */
export function createOutboxPump(deps: {
  outbox: Outbox;
  broker: Pick<BrokerLink, "connected" | "publishUp" | "on" | "off">;
  clock: Clock;
  /** How long a row has waited is elapsed time: a wall clock set back must not hold resends for hours. */
  monotonic: Monotonic;
  log: Logger;
  /**
   * The cloud's clock as the gateway learns it: rows observed before it was known are held, after a
   * connect, until this session's answer dates them (or SESSION_SYNC_WAIT_MS), so the cloud does not date
   * them by a wall clock that may be a day off.
   */
  cloudTime?: Pick<CloudClock, "settled">;
  resendAfterMs?: number;
  maxResendAfterMs?: number;
  batch?: number;
}) {
  const resendAfterMs = deps.resendAfterMs ?? 10_000;
  const maxResendAfterMs = Math.max(resendAfterMs, deps.maxResendAfterMs ?? MAX_RESEND_AFTER_MS);
  /** How old the oldest unacknowledged row must be before it goes again: grows while acks stay away. */
  let staleAfterMs = resendAfterMs;
  const sentAt = new Map<number, number>();
  let lastSent = 0;
  /** Bumped by every resend from the start, so a publish that completes afterwards cannot move the cursor. */
  let epoch = 0;
  let pumping = false;
  let again = false;
  let timer: TimerHandle | null = null;
  /** This connection has waited for the cloud's time once (undated rows then go as they are). */
  let waitedForTime = false;

  /** The session's answer, or SESSION_SYNC_WAIT_MS: whichever comes first. */
  function cloudTimeSettled(): Promise<void> {
    const { cloudTime } = deps;
    if (!cloudTime) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const t = deps.clock.setTimer(SESSION_SYNC_WAIT_MS, resolve);
      void cloudTime.settled().then(() => {
        deps.clock.clearTimer(t);
        resolve();
      });
    });
  }

  async function pump(): Promise<void> {
    if (pumping) {
      again = true;
      return;
    }
    pumping = true;
    try {
      do {
        again = false;
        while (deps.broker.connected) {
          const batch = deps.outbox.pending(lastSent, deps.batch ?? 100);
          if (batch.length === 0) break;
          if (!waitedForTime && batch.some((m) => m.observed_cloud_at === undefined)) {
            await cloudTimeSettled();
            waitedForTime = true;
            continue; // read again: what the answer dated goes up dated
          }
          for (const msg of batch) {
            const started = epoch;
            await deps.broker.publishUp(msg);
            if (started !== epoch) break; // a reconnect reset the cursor meanwhile: go on from there
            lastSent = msg.seq;
            sentAt.set(msg.seq, deps.monotonic.nowMs());
          }
        }
      } while (again && deps.broker.connected);
    } catch (err) {
      deps.log.warn({ err: (err as Error).message }, "outbox publish interrupted; will resend");
    } finally {
      pumping = false;
    }
  }

  function resendFromStart() {
    epoch++;
    lastSent = 0;
    sentAt.clear();
    void pump();
  }

  function checkStale() {
    const now = deps.monotonic.nowMs();
    const oldest = deps.outbox.pending(0, 1)[0];
    const at = oldest ? sentAt.get(oldest.seq) : undefined;
    // A row never sent while no pump runs: its publish failed and stopped the batch.
    const stuck = oldest !== undefined && at === undefined && !pumping;
    if (stuck || (oldest && at !== undefined && now - at >= staleAfterMs)) {
      deps.log.info(
        { seq: oldest.seq, waited_ms: staleAfterMs },
        "unacknowledged outbox rows: sending again",
      );
      resendFromStart();
      if (!stuck) staleAfterMs = Math.min(staleAfterMs * 2, maxResendAfterMs);
    }
    timer = deps.clock.setTimer(resendAfterMs, checkStale);
  }

  const onAppended = () => void pump();
  // A new connection, or a cloud that (re)subscribed and asks: the link is fresh, so is the patience.
  const onConnected = () => {
    waitedForTime = false;
    staleAfterMs = resendAfterMs;
    resendFromStart();
  };
  const onAck = (seqs: number[], resend: boolean, outboxId?: string) => {
    // An ack names one outbox: when it confirmed none of ours it says nothing about what we sent.
    if (deps.outbox.confirm(seqs, outboxId) > 0) {
      for (const s of seqs) sentAt.delete(s);
      staleAfterMs = resendAfterMs;
    }
    if (resend) onConnected();
  };

  return {
    start() {
      deps.outbox.on("appended", onAppended);
      deps.broker.on("connected", onConnected);
      deps.broker.on("ack", onAck);
      timer = deps.clock.setTimer(resendAfterMs, checkStale);
      if (deps.broker.connected) resendFromStart();
    },
    stop() {
      deps.outbox.off("appended", onAppended);
      deps.broker.off("connected", onConnected);
      deps.broker.off("ack", onAck);
      if (timer) deps.clock.clearTimer(timer);
    },
    pump,
  };
}
