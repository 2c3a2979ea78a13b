import http from "node:http";
import { Counter, collectDefaultMetrics, Registry } from "prom-client";
import type { UpChannel } from "../shared/wire/topics.ts";

/**
 * Why the cloud refused a gateway's message, in whole or in part (S30). A fixed set, so the label stays
 * bounded (U23).
 */
export type GatewayRefusal =
  /** Not JSON, or fails its schema. */
  | "invalid"
  /** Names another gateway than the topic it came on. */
  | "other_gateway"
  /** About a device this gateway does not drive. */
  | "foreign_device"
  /** About a command for a device this gateway does not drive (progress, photo parts). */
  | "foreign_command"
  /** Arrived while too many messages of this gateway were waiting to be applied. */
  | "backlog"
  /** Later in its outbox than a message the store refused (full): it waits for that one to be applied. */
  | "out_of_order";

/** The message type of an `up` message, or the channel of any other (bounded either way). */
export type GatewayMessageKind =
  | "command_progress"
  | "device_state"
  | "hardware_event"
  | "access_decision"
  | "photo"
  | UpChannel;

/** What the embedded broker refused or dropped; also bounded. */
export type BrokerRefusal =
  /** A login with a wrong secret, an unknown user, no user, or a client id not the user's own. */
  | "login_failed"
  /** A login refused unchecked: too many failures for this user from this address. */
  | "login_locked"
  /** A PUBLISH with QoS 2 (the wire uses 0 and 1): the connection is closed. */
  | "qos2"
  /** A packet over its size limit, a malformed header or a first packet that is not a CONNECT. */
  | "frame"
  /** A publish on a topic the client may not write: the connection is closed. */
  | "publish_denied"
  /** A subscription to a topic the client may not read: a negative SUBACK. */
  | "subscribe_denied"
  /** A message not queued for a session that holds its limit of messages or bytes. */
  | "queue_full";

/** The cloud's Prometheus metrics; created by the composition root and handed to what counts. */
export function createCloudMetrics(prefix = "parking_cloud_") {
  const registry = new Registry();
  return {
    registry,
    prefix,
    gatewayRefused: new Counter<"type" | "reason">({
      name: `${prefix}gateway_messages_refused_total`,
      help: "Gateway messages the cloud refused in whole or part (nothing of them stored, or kept without the device they named)",
      labelNames: ["type", "reason"],
      registers: [registry],
    }),
    brokerRefused: new Counter<"reason">({
      name: `${prefix}mqtt_refused_total`,
      help: "What the embedded MQTT broker refused: logins, packets, publishes, subscriptions, queued messages",
      labelNames: ["reason"],
      registers: [registry],
    }),
    keyReportsCoalesced: new Counter({
      name: `${prefix}key_reports_coalesced_total`,
      help: "Key version reports of a gateway replaced by a later one before they were answered",
      registers: [registry],
    }),
    keySnapshotsDeferred: new Counter({
      name: `${prefix}key_snapshots_deferred_total`,
      help: "Key snapshots put off because the gateway had one within the snapshot interval",
      registers: [registry],
    }),
  };
}

export type CloudMetrics = ReturnType<typeof createCloudMetrics>;

/** The sum of a counter over the series that carry these labels (all of them when none are given). */
export async function counterValue(
  counter: Counter<string>,
  labels: Record<string, string> = {},
): Promise<number> {
  const { values } = await counter.get();
  return values
    .filter((v) =>
      Object.entries(labels).every(([k, want]) => (v.labels as Record<string, unknown>)[k] === want),
    )
    .reduce((sum, v) => sum + v.value, 0);
}

/**
 * Serves /metrics on a listener of its own (METRICS_PORT), apart from the public API, with Node's default
 * metrics (event-loop lag included) beside the cloud's own.
 */
export async function serveCloudMetrics(
  metrics: CloudMetrics,
  host: string,
  port: number,
): Promise<http.Server> {
  collectDefaultMetrics({ register: metrics.registry, prefix: metrics.prefix });
  const server = http.createServer((req, res) => {
    if (req.url !== "/metrics") {
      res.writeHead(404).end();
      return;
    }
    metrics.registry
      .metrics()
      .then((body) => res.writeHead(200, { "content-type": metrics.registry.contentType }).end(body))
      .catch(() => res.writeHead(500).end());
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  return server;
}
