import type { MqttClient } from "mqtt";
import type { Logger } from "pino";
import type { Clock } from "../../shared/time/clock.ts";
import { parseTopic } from "../../shared/wire/topics.ts";
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
import { openBrokerSession } from "./broker-session.ts";
import { createDeviceMapPublisher } from "./device-map-publisher.ts";
import { createGatewayChains } from "./gateway-chains.ts";
import { createGatewayMessages } from "./gateway-messages.ts";
import { createGatewayPublisher } from "./gateway-publisher.ts";
import { gatewayRepository } from "./gateway-repository.ts";
import { createHeartbeatIntake } from "./heartbeat-intake.ts";
import { createReportIntake } from "./report-intake.ts";

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
    /** Where gateways' command progress is applied, so it never queues behind their reports; `db` unless given. */
    commandDb?: Db;
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
  const session = openBrokerSession(cfg, { clock, log });
  const { client } = session;
  const out = createGatewayPublisher(client, cfg.prefix, clock, (ids) => keySync.keysChanged(ids));
  const keySync = createKeySync({
    db,
    clock,
    log,
    metrics,
    sweepMs: cfg.keySweepMs,
    publish: (gatewayId, msg) => out.publishKeys(gatewayId, msg),
  });
  const maps = createDeviceMapPublisher({ client, prefix: cfg.prefix, db, clock });
  const messages = createGatewayMessages({
    prefix: cfg.prefix,
    db,
    commandDb: deps.commandDb ?? db,
    clock,
    log,
    timeouts,
    settled: deps.settled,
    refused,
    publisher: out.publisher,
    // Heartbeats of all gateways are written together (its chain still waits for each gateway's own).
    heartbeats: createHeartbeatIntake(deps.heartbeatDb ?? db),
    // Device reports of all gateways are committed together, each acknowledged after its batch.
    reports: createReportIntake(db, { timeouts, log, refused }),
    keySync,
    publishDeviceMaps: maps.publish,
    echoSync: out.echoSync,
  });
  let stopping = false;
  const chains = createGatewayChains({
    limit: cfg.backlog ?? DEFAULT_BACKLOG,
    log,
    refused,
    apply: messages.apply,
    onApplied: deps.onApplied,
    stopping: () => stopping,
  });
  client.on("message", (topic, raw) => chains.accept(topic, raw, parseTopic(cfg.prefix, topic)));

  try {
    await session.connected();
    await session.subscribe();
    log.info({ broker: cfg.brokerUrl, share_group: cfg.shareGroup ?? null }, "gateway link connected");
    await maps.publish();
  } catch (err) {
    await session.abandon();
    throw err;
  }

  const watcher = maps.watch({ clock, log, everyMs: cfg.mapPollMs ?? 1_000 });
  // After a reconnect (a broker restart loses subscriptions and, without persistence, retained maps),
  // gateways may have sent into the void: subscribe again, publish the maps again and ask each gateway to
  // resend what the cloud has not confirmed.
  client.on("connect", () => {
    void session
      .subscribe()
      .then(() => maps.publish())
      .then(() => gatewayRepository(db).allIds())
      .then((ids) => out.askToResend(ids))
      .catch((err: unknown) => log.warn({ err }, "could not ask gateways to resend"));
  });

  keySync.start();

  return {
    ...out.publisher,
    publishDeviceMaps: maps.publish,
    client,
    async close() {
      stopping = true;
      watcher.stop();
      // Messages being applied finish (their effects commit or not).
      await session.close(() => [keySync.stop(), ...chains.inFlight(), ...messages.stop()]);
    },
  };
}
