import type { MqttClient } from "mqtt";
import { Backoff } from "../time/backoff.ts";
import type { Clock, TimerHandle } from "../time/clock.ts";

/** No attempt follows the last one sooner than this, whatever the jitter drew. */
const FLOOR_MS = 100;

export type ReconnectOptions = {
  clock: Clock;
  /** The first wait after a lost or failed connection; doubles per failure up to maxMs. */
  minMs: number;
  maxMs: number;
  /** With it, each wait is drawn up to the current bound (full jitter), e.g. Math.random. */
  jitter?: () => number;
  /**
   * How long a connection must last before its loss starts the backoff over (default 5 s): a broker
   * that accepts and drops at once (a session taken over by a second process with the same client id,
   * a broker shutting down) is retried with growing waits too.
   */
  stableMs?: number;
  /** Told of each wait as it begins (the owner logs it: a few lines a minute while the broker is away). */
  onWait?: (ms: number) => void;
};

/**
 * Reconnects an mqtt.js client made with `reconnectPeriod: 0` after each lost or failed connection,
 * waiting on the injected clock with a capped backoff. mqtt.js's own reconnect arms a real-time timer in
 * its own `close` listener, before any of ours runs, so a period set from a `close` handler applies one
 * attempt late (the first retry after a drop waits whatever the previous outage drew, up to the cap), and
 * no test can drive it. `stop()` clears the pending attempt; call it before ending the client.
 */
export function reconnectWithBackoff(client: MqttClient, o: ReconnectOptions): { stop(): void } {
  const backoff = new Backoff({ minMs: o.minMs, maxMs: o.maxMs, jitter: o.jitter });
  const stableMs = o.stableMs ?? 5_000;
  let timer: TimerHandle | null = null;
  let connectedAt: number | null = null;
  let stopped = false;

  const onConnect = () => {
    connectedAt = o.clock.now().getTime();
  };
  const onClose = () => {
    if (connectedAt !== null && o.clock.now().getTime() - connectedAt >= stableMs) backoff.reset();
    connectedAt = null;
    // One attempt pending at a time (a failed attempt may report its close more than once); none once
    // the client is being ended.
    if (stopped || timer || client.disconnecting) return;
    const ms = Math.max(FLOOR_MS, backoff.next());
    timer = o.clock.setTimer(ms, () => {
      timer = null;
      if (!stopped && !client.connected && !client.disconnecting) client.connect();
    });
    o.onWait?.(ms);
  };
  client.on("connect", onConnect);
  client.on("close", onClose);
  return {
    stop() {
      stopped = true;
      if (timer) o.clock.clearTimer(timer);
      timer = null;
      client.off("connect", onConnect);
      client.off("close", onClose);
    },
  };
}
