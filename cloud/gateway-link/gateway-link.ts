import type { MqttClient } from "mqtt";
import type { Logger } from "pino";
import { z } from "zod";
import { reconnectWithBackoff } from "../../shared/node/mqtt-reconnect.ts";
import type { Clock, TimerHandle } from "../../shared/time/clock.ts";
import { Heartbeat, KeysUp, OutboxId, Status, UpMessage } from "../../shared/wire/messages.ts";
import { parseTopic, sharedFilter, topicFor, UP_CHANNELS, wildcardFor } from "../../shared/wire/topics.ts";
import { redeliverPending } from "../commands/command-delivery.ts";
import type { CommandTimeoutConfig } from "../devices/timeouts.ts";
import { createKeySync } from "../key-sync/key-sync.ts";
import {
  type CloudMetrics,
  createCloudMetrics,
  type GatewayMessageKind,
  type GatewayRefusal,
} from "../metrics.ts";
import type { CommandSettledNotifier, GatewayPublisher } from "../ports.ts";
import type { Db } from "../store/db.ts";
import { applyUpMessage } from "./apply-up-message.ts";
import { allGatewayIds, deviceMapFor, watchDeviceMaps } from "./device-map.ts";
import { applyStatus } from "./gateway-reports.ts";
import { createHeartbeatIntake } from "./heartbeat-intake.ts";
import { connectMqtt } from "./mqtt-client.ts";

export type GatewayLinkConfig = {
  brokerUrl: string;
  username?: string;
  password?: string;
  /** Stable per replica, and unique among replicas (a second login under an id ends the first). */
  clientId: string;
  prefix: string;
  /**
   * Subscribe to the up channels as this shared-subscription group, so each message reaches one replica
   * of the group; unset: plain subscriptions. A group member's session is clean (docs/decisions/replicas.md).
   */
  shareGroup?: string;
  /** How often the store is checked for changed device maps. */
  mapPollMs?: number;
  /** How often gateways whose confirmed key version lags are brought up to date (repairs lost deltas). */
  keySweepMs?: number;
  /**
   * Messages of one gateway received and not yet applied, at most (count and bytes); what arrives beyond
   * is dropped and counted, unacknowledged, so the gateway sends it again later.
   */
  backlog?: { messages: number; bytes: number };
};

/**
 * A gateway's messages are applied one after another; one that floods faster than that must not grow
 * the process without bound. Far above a gateway resending its outbox (one message in flight at a time).
 */
const DEFAULT_BACKLOG = { messages: 1_000, bytes: 16 * 1024 * 1024 };

/** How long a close waits for messages in flight before it ends the broker session by force. */
const CLOSE_GRACE_MS = 2_000;

/** Waits between attempts to reach a broker that went away: doubling from the first, never beyond the cap. */
const RECONNECT = { minMs: 500, maxMs: 10_000 };

/** Enough of an up message to acknowledge it when nothing else in it can be used. */
const SeqOnly = z.object({
  seq: z.number().int().positive(),
  outbox_id: OutboxId.optional().catch(undefined),
});

export type GatewayLink = GatewayPublisher & {
  /** Publishes (retained) the device map of each gateway, e.g. after the site manifest changed. */
  publishDeviceMaps(gatewayIds?: string[]): Promise<void>;
  close(): Promise<void>;
  readonly client: MqttClient;
};

/**
 * The cloud's end of the wire (flow 1 steps 2 and 7): publishes commands, and applies what gateways
 * report, validated by the shared schemas and deduplicated by (gateway_id, outbox_id, seq).
 */
export async function startGatewayLink(
  cfg: GatewayLinkConfig,
  deps: {
    db: Db;
    /** Where heartbeats are written (heartbeat-intake.ts); `db` unless given. */
    heartbeatDb?: Db;
    clock: Clock;
    log: Logger;
    timeouts: CommandTimeoutConfig;
    /** Told after each message of a gateway has been applied, in order (metrics, tests that wait on it). */
    onApplied?: (gatewayId: string, channel: string) => void;
    /** Told of each command outcome applied here, so a request waiting on it answers at once. */
    settled?: CommandSettledNotifier;
    /** Where refused messages are counted (`gateway_messages_refused_total`); its own when not given. */
    metrics?: CloudMetrics;
  },
): Promise<GatewayLink> {
  const { db, clock, log, timeouts } = deps;
  const metrics = deps.metrics ?? createCloudMetrics();
  const refused = (type: GatewayMessageKind, reason: GatewayRefusal) =>
    metrics.gatewayRefused.inc({ type, reason });
  const backlogLimit = cfg.backlog ?? DEFAULT_BACKLOG;
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
  // including its resubscription: every connect subscribes below.
  const reconnects = reconnectWithBackoff(client, {
    clock,
    ...RECONNECT,
    onWait: (ms) => log.info({ broker: cfg.brokerUrl, retry_in_ms: ms }, "broker unreachable: retrying"),
  });
  const filterFor = (c: (typeof UP_CHANNELS)[number]) =>
    cfg.shareGroup ? sharedFilter(cfg.shareGroup, wildcardFor(cfg.prefix, c)) : wildcardFor(cfg.prefix, c);
  const subscribe = () =>
    client.subscribeAsync(Object.fromEntries(UP_CHANNELS.map((c) => [filterFor(c), { qos: 1 as const }])));
  // One gateway's messages are applied in arrival order; different gateways proceed in parallel. Beside
  // other replicas of a share group that order is not the gateway's: what depends on it checks seq.
  const chains = new Map<string, Promise<void>>();
  /** What each gateway's chain holds, received and not yet applied. */
  const backlog = new Map<string, { messages: number; bytes: number }>();
  /** The map version this process last published per gateway. */
  const published = new Map<string, string>();
  // Heartbeats of all gateways are written together (its chain still waits for each gateway's own).
  const heartbeats = createHeartbeatIntake(deps.heartbeatDb ?? db);

  const publisher: GatewayPublisher = {
    async publishCommand(gatewayId, request) {
      await client.publishAsync(topicFor(cfg.prefix, gatewayId, "cmd"), JSON.stringify(request), { qos: 1 });
    },
    async ack(gatewayId, seqs, outboxId) {
      const ack = outboxId === undefined ? { seqs } : { seqs, outbox_id: outboxId };
      await client.publishAsync(topicFor(cfg.prefix, gatewayId, "ack"), JSON.stringify(ack), { qos: 1 });
    },
    keysChanged(gatewayIds) {
      keySync.keysChanged(gatewayIds);
    },
  };
  const keySync = createKeySync({
    db,
    clock,
    log,
    metrics,
    sweepMs: cfg.keySweepMs,
    publish: async (gatewayId, msg) => {
      await client.publishAsync(topicFor(cfg.prefix, gatewayId, "keys"), JSON.stringify(msg), { qos: 1 });
    },
  });

  async function onUp(gatewayId: string, payload: unknown) {
    const parsed = UpMessage.safeParse(payload);
    const msg = parsed.success ? parsed.data : null;
    if (!msg || msg.gateway_id !== gatewayId) {
      // A message that can never be applied is dropped, but acknowledged when its sequence number can be
      // read: otherwise the sender would resend it forever and hold up everything behind it.
      const seq = SeqOnly.safeParse(payload);
      refused(msg?.type ?? "up", msg ? "other_gateway" : "invalid");
      log.error(
        {
          gateway_id: gatewayId,
          named: msg?.gateway_id,
          seq: seq.success ? seq.data.seq : null,
          issues: parsed.success ? undefined : parsed.error.issues.slice(0, 5),
        },
        msg ? "message names another gateway: dropped" : "invalid up message dropped",
      );
      if (seq.success) await publisher.ack(gatewayId, [seq.data.seq], seq.data.outbox_id ?? "");
      return;
    }
    // A duplicate is acknowledged again: its first ack was evidently lost. The ack names the outbox ("" :
    // none), so a gateway whose store was made again does not take it for its own seq.
    await applyUpMessage(db, gatewayId, msg, {
      now: clock.now(),
      timeouts,
      log,
      settled: deps.settled,
      refused,
    });
    await publisher.ack(gatewayId, [msg.seq], msg.outbox_id ?? "");
  }

  async function onStatus(st: Status) {
    await applyStatus(db, st, clock.now());
    if (!st.online) return;
    // The gateway announces itself only once subscribed: its map (a broker restarted without persistence
    // has lost the retained copy) and whatever waits for it can be delivered now, in that order.
    await publishDeviceMaps([st.gateway_id]);
    await redeliverPending(db, publisher, st.gateway_id, { clock, timeouts, log });
  }

  /** A message's content when it parsed and names the gateway of its topic; otherwise counted: null. */
  function usable<T extends { gateway_id: string }>(
    parsed: { success: true; data: T } | { success: false },
    t: { gatewayId: string; channel: GatewayMessageKind },
  ): T | null {
    const reason = !parsed.success
      ? "invalid"
      : parsed.data.gateway_id !== t.gatewayId
        ? "other_gateway"
        : null;
    if (parsed.success && reason === null) return parsed.data;
    refused(t.channel, reason ?? "invalid");
    log.warn({ gateway_id: t.gatewayId, channel: t.channel, reason }, "gateway message dropped");
    return null;
  }

  function onMessage(topic: string, raw: Buffer): Promise<void> | void {
    const parsedTopic = parseTopic(cfg.prefix, topic);
    if (!parsedTopic) return;
    const t = { gatewayId: parsedTopic.gatewayId, channel: parsedTopic.channel as GatewayMessageKind };
    let payload: unknown;
    try {
      payload = JSON.parse(raw.toString("utf8"));
    } catch {
      refused(t.channel, "invalid");
      return log.warn({ topic }, "non-JSON message dropped");
    }
    switch (t.channel) {
      case "up":
        return onUp(t.gatewayId, payload);
      case "hb": {
        const hb = usable(Heartbeat.safeParse(payload), t);
        return hb ? heartbeats.apply(hb, clock.now()) : undefined;
      }
      case "status": {
        const st = usable(Status.safeParse(payload), t);
        return st ? onStatus(st) : undefined;
      }
      case "keys_report": {
        const report = usable(KeysUp.safeParse(payload), t);
        if (!report) return;
        // Version reports are coalesced by the key sync (only a gateway's latest matters), so the
        // gateway's other messages do not wait for one to be answered.
        if (report.kind === "version") return void keySync.onReport(t.gatewayId, report);
        return keySync.onReport(t.gatewayId, report);
      }
      default:
        return;
    }
  }

  client.on("message", (topic, raw) => {
    const t = parseTopic(cfg.prefix, topic);
    const gatewayId = t?.gatewayId ?? "";
    const held = backlog.get(gatewayId) ?? { messages: 0, bytes: 0 };
    if (held.messages + 1 > backlogLimit.messages || held.bytes + raw.length > backlogLimit.bytes) {
      // Not acknowledged: a report goes out again from the gateway's outbox once it has caught up.
      refused((t?.channel ?? "up") as GatewayMessageKind, "backlog");
      log.debug({ gateway_id: gatewayId, backlog: held.messages }, "gateway backlog full: message dropped");
      return;
    }
    held.messages += 1;
    held.bytes += raw.length;
    backlog.set(gatewayId, held);
    const next = (chains.get(gatewayId) ?? Promise.resolve())
      .then(() => onMessage(topic, raw))
      .then(() => deps.onApplied?.(gatewayId, t?.channel ?? ""))
      .catch((err: unknown) => log.error({ err, topic }, "failed to apply a gateway message"))
      .finally(() => {
        held.messages -= 1;
        held.bytes -= raw.length;
        if (held.messages === 0) backlog.delete(gatewayId);
      });
    chains.set(gatewayId, next);
    void next.finally(() => {
      if (chains.get(gatewayId) === next) chains.delete(gatewayId);
    });
  });
  // Once close() has begun, what the ending client refuses ("write after end") is the stop itself.
  let closing = false;
  client.on("error", (err) => {
    if (closing) log.debug({ err: err.message }, "broker link error while closing");
    else log.warn({ err }, "broker link error");
  });

  async function publishDeviceMaps(gatewayIds?: string[]) {
    for (const id of gatewayIds ?? (await allGatewayIds(db))) {
      const map = await deviceMapFor(db, id);
      await client.publishAsync(topicFor(cfg.prefix, id, "config"), JSON.stringify(map), {
        qos: 1,
        retain: true,
      });
      published.set(id, map.version);
    }
  }

  try {
    await new Promise<void>((resolve, reject) => {
      const timer = clock.setTimer(10_000, () =>
        reject(new Error(`broker ${cfg.brokerUrl} did not answer within 10 s`)),
      );
      client.once("connect", () => {
        clock.clearTimer(timer);
        resolve();
      });
    });
    await subscribe();
    log.info({ broker: cfg.brokerUrl, share_group: cfg.shareGroup ?? null }, "gateway link connected");
    // Retained, so a gateway that connects later (or reconnects with a clean session) gets its map at once.
    await publishDeviceMaps();
  } catch (err) {
    // A link that never started must not go on reconnecting behind its caller's back.
    reconnects.stop();
    await client.endAsync(true);
    throw err;
  }

  // A manifest applied while the cloud runs (by the CLI, or another replica) records each gateway's new
  // map version in the store; every replica publishes what changed, so running gateways take it at once.
  const watcher = watchDeviceMaps({
    db,
    clock,
    log,
    everyMs: cfg.mapPollMs ?? 1_000,
    isPublished: (id, version) => published.get(id) === version,
    publish: (ids) => publishDeviceMaps(ids),
  });
  // After a reconnect (a broker restart loses subscriptions and, without persistence, retained maps),
  // gateways may have sent into the void: subscribe again, publish the maps again and ask each gateway to
  // resend what the cloud has not confirmed, instead of waiting for its periodic resend.
  client.on("connect", () => {
    void subscribe()
      .then(() => publishDeviceMaps())
      .then(() => allGatewayIds(db))
      .then((ids) =>
        Promise.all(
          ids.map((id) =>
            client.publishAsync(topicFor(cfg.prefix, id, "ack"), JSON.stringify({ seqs: [], resend: true }), {
              qos: 1,
            }),
          ),
        ),
      )
      .catch((err: unknown) => log.warn({ err }, "could not ask gateways to resend"));
  });

  keySync.start();

  return {
    ...publisher,
    publishDeviceMaps,
    client,
    async close() {
      closing = true;
      watcher.stop();
      reconnects.stop();
      // Messages being applied finish (their effects commit or not); a publish that waits for an absent
      // broker does not hold the close for ever: after a grace period the client ends by force.
      const drained = Promise.allSettled([keySync.stop(), ...chains.values()]).then(() => true);
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
