import type { MqttClient } from "mqtt";
import type { Logger } from "pino";
import type { Clock } from "../../shared/clock.ts";
import { Heartbeat, Status, UpMessage } from "../../shared/wire/messages.ts";
import { parseTopic, topicFor, wildcardFor } from "../../shared/wire/topics.ts";
import type { CommandTimeoutConfig } from "../commands/timeouts.ts";
import type { GatewayPublisher } from "../ports.ts";
import type { Db } from "../store/db.ts";
import { applyUpMessage } from "./apply-up-message.ts";
import { allGatewayIds, deviceMapFor } from "./device-map.ts";
import { applyHeartbeat, applyStatus } from "./gateway-reports.ts";
import { connectMqtt } from "./mqtt-client.ts";

export type GatewayLinkConfig = {
  brokerUrl: string;
  username?: string;
  password?: string;
  /** Stable per replica so the broker keeps its session (and queued messages) across reconnects. */
  clientId: string;
  prefix: string;
};

export type GatewayLink = GatewayPublisher & {
  /** Publishes (retained) the device map of each gateway, e.g. after the site manifest changed. */
  publishDeviceMaps(gatewayIds?: string[]): Promise<void>;
  close(): Promise<void>;
  readonly client: MqttClient;
};

/**
 * The cloud's end of the wire (flow 1 steps 2 and 7): publishes commands, and applies what gateways
 * report, validated by the shared schemas and deduplicated by (gateway_id, seq).
 */
export async function startGatewayLink(
  cfg: GatewayLinkConfig,
  deps: { db: Db; clock: Clock; log: Logger; timeouts: CommandTimeoutConfig },
): Promise<GatewayLink> {
  const { db, clock, log, timeouts } = deps;
  const client = connectMqtt(cfg.brokerUrl, {
    clientId: cfg.clientId,
    clean: false,
    username: cfg.username,
    password: cfg.password,
  });
  // One gateway's messages are applied in arrival order; different gateways proceed in parallel.
  const chains = new Map<string, Promise<void>>();

  const publisher: GatewayPublisher = {
    async publishCommand(gatewayId, request) {
      await client.publishAsync(topicFor(cfg.prefix, gatewayId, "cmd"), JSON.stringify(request), { qos: 1 });
    },
    async ack(gatewayId, seqs) {
      await client.publishAsync(topicFor(cfg.prefix, gatewayId, "ack"), JSON.stringify({ seqs }), { qos: 1 });
    },
  };

  async function onUp(gatewayId: string, payload: unknown) {
    const parsed = UpMessage.safeParse(payload);
    if (!parsed.success)
      return log.warn({ gateway_id: gatewayId, issues: parsed.error.issues }, "invalid up message dropped");
    const msg = parsed.data;
    if (msg.gateway_id !== gatewayId)
      return log.warn({ gateway_id: gatewayId }, "message names another gateway: dropped");
    // A duplicate is acknowledged again: its first ack was evidently lost.
    await applyUpMessage(db, gatewayId, msg, { now: clock.now(), timeouts, log });
    await publisher.ack(gatewayId, [msg.seq]);
  }

  function onMessage(topic: string, raw: Buffer): Promise<void> | void {
    const t = parseTopic(cfg.prefix, topic);
    if (!t) return;
    let payload: unknown;
    try {
      payload = JSON.parse(raw.toString("utf8"));
    } catch {
      return log.warn({ topic }, "non-JSON message dropped");
    }
    switch (t.channel) {
      case "up":
        return onUp(t.gatewayId, payload);
      case "hb": {
        const hb = Heartbeat.safeParse(payload);
        if (!hb.success || hb.data.gateway_id !== t.gatewayId)
          return log.warn({ topic }, "invalid heartbeat dropped");
        return applyHeartbeat(db, hb.data, clock.now());
      }
      case "status": {
        const st = Status.safeParse(payload);
        if (!st.success || st.data.gateway_id !== t.gatewayId)
          return log.warn({ topic }, "invalid status dropped");
        return applyStatus(db, st.data, clock.now());
      }
      default:
        return;
    }
  }

  client.on("message", (topic, raw) => {
    const gatewayId = parseTopic(cfg.prefix, topic)?.gatewayId ?? "";
    const next = (chains.get(gatewayId) ?? Promise.resolve())
      .then(() => onMessage(topic, raw))
      .catch((err: unknown) => log.error({ err, topic }, "failed to apply a gateway message"));
    chains.set(gatewayId, next);
    void next.finally(() => {
      if (chains.get(gatewayId) === next) chains.delete(gatewayId);
    });
  });
  client.on("error", (err) => log.warn({ err }, "broker link error"));

  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`broker ${cfg.brokerUrl} did not answer within 10 s`)),
      10_000,
    );
    client.once("connect", () => {
      clearTimeout(timer);
      resolve();
    });
  });
  await client.subscribeAsync(
    Object.fromEntries(
      (["up", "hb", "status"] as const).map((c) => [wildcardFor(cfg.prefix, c), { qos: 1 as const }]),
    ),
  );
  log.info({ broker: cfg.brokerUrl }, "gateway link connected");

  async function publishDeviceMaps(gatewayIds?: string[]) {
    for (const id of gatewayIds ?? (await allGatewayIds(db))) {
      const map = await deviceMapFor(db, id);
      await client.publishAsync(topicFor(cfg.prefix, id, "config"), JSON.stringify(map), {
        qos: 1,
        retain: true,
      });
    }
  }
  // Retained, so a gateway that connects later (or reconnects with a clean session) gets its map at once.
  await publishDeviceMaps();
  // After a reconnect (a broker restart loses subscriptions), gateways may have sent into the void:
  // ask each to resend what the cloud has not confirmed, instead of waiting for its periodic resend.
  client.on("connect", () => {
    void allGatewayIds(db)
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

  return {
    ...publisher,
    publishDeviceMaps,
    client,
    async close() {
      await Promise.allSettled([...chains.values()]);
      await client.endAsync();
    },
  };
}
