import type { Logger } from "pino";
import { reconnectWithBackoff } from "../../shared/node/mqtt-reconnect.ts";
import type { Clock, TimerHandle } from "../../shared/time/clock.ts";
import { sharedFilter, UP_CHANNELS, wildcardFor } from "../../shared/wire/topics.ts";
import { connectMqtt } from "./mqtt-client.ts";

/** Waits between attempts to reach a broker that went away: doubling from the first, never beyond the cap. */
const RECONNECT = { minMs: 500, maxMs: 10_000 };

/** How long a close waits for messages in flight before it ends the broker session by force. */
const CLOSE_GRACE_MS = 2_000;

export type BrokerSessionConfig = {
  brokerUrl: string;
  username?: string;
  password?: string;
  clientId: string;
  prefix: string;
  shareGroup?: string;
};

/**
 * The cloud's MQTT session with the broker: connects, subscribes to every up channel (as a member of the
 * share group when there is one), reconnects on our clock with a capped backoff and subscribes again on
 * every connect.
 */
export function openBrokerSession(cfg: BrokerSessionConfig, deps: { clock: Clock; log: Logger }) {
  const { clock, log } = deps;
  const client = connectMqtt(cfg.brokerUrl, {
    clientId: cfg.clientId,
    // A lone subscriber keeps its session, so the broker queues for it while it reconnects. A group
    // member's does not: the broker would go on queueing a dead replica's share of the messages for it
    // (Mosquitto does) instead of handing them to the live ones.
    clean: cfg.shareGroup !== undefined,
    username: cfg.username,
    password: cfg.password,
    reconnectPeriod: 0,
  });
  // Reconnects wait on our clock with a capped backoff; so nothing of mqtt.js's own reconnect remains,
  // including its resubscription: every connect subscribes (`subscribe`).
  const reconnects = reconnectWithBackoff(client, {
    clock,
    ...RECONNECT,
    onWait: (ms) => log.info({ broker: cfg.brokerUrl, retry_in_ms: ms }, "broker unreachable: retrying"),
  });
  const filterFor = (c: (typeof UP_CHANNELS)[number]) =>
    cfg.shareGroup ? sharedFilter(cfg.shareGroup, wildcardFor(cfg.prefix, c)) : wildcardFor(cfg.prefix, c);
  // Once the session is ending, what the ending client refuses ("write after end") is the stop itself.
  let ending = false;
  client.on("error", (err) => {
    if (ending) log.debug({ err: err.message }, "broker link error while closing");
    else log.warn({ err }, "broker link error");
  });

  return {
    client,

    async subscribe(): Promise<void> {
      await client.subscribeAsync(
        Object.fromEntries(UP_CHANNELS.map((c) => [filterFor(c), { qos: 1 as const }])),
      );
    },

    /** Resolves at the first connect; rejects when the broker does not answer within 10 s. */
    connected(): Promise<void> {
      return new Promise<void>((resolve, reject) => {
        const timer = clock.setTimer(10_000, () =>
          reject(new Error(`broker ${cfg.brokerUrl} did not answer within 10 s`)),
        );
        client.once("connect", () => {
          clock.clearTimer(timer);
          resolve();
        });
      });
    },

    /** A session that never started must not go on reconnecting behind its caller's back. */
    async abandon(): Promise<void> {
      ending = true;
      reconnects.stop();
      await client.endAsync(true);
    },

    /**
     * Ends the session once what `inFlight` gives (asked once reconnecting has stopped) has settled; a publish that waits for an absent broker does not
     * hold the close for ever: after a grace period the client ends by force.
     */
    async close(inFlight: () => Promise<unknown>[]): Promise<void> {
      ending = true;
      reconnects.stop();
      const drained = Promise.allSettled(inFlight()).then(() => true);
      let timer: TimerHandle | null = null;
      const grace = new Promise<false>((resolve) => {
        timer = clock.setTimer(CLOSE_GRACE_MS, () => resolve(false));
      });
      const clean = await Promise.race([drained, grace]);
      if (timer) clock.clearTimer(timer);
      await client.endAsync(!clean || !client.connected);
    },
  };
}

export type BrokerSession = ReturnType<typeof openBrokerSession>;
