import { EventEmitter } from "node:events";
import net from "node:net";
// mqtt's client module alone: its index also loads every transport it can connect over (ws, tls, socks and
// the browser's), and the daemon gives the client a TCP socket of its own (docs/decisions/gateway-memory.md).
import type { MqttClient as Client } from "mqtt";
import mqttClient from "mqtt/lib/client";
import type { Logger } from "pino";
import { reconnectWithBackoff } from "../../../shared/node/mqtt-reconnect.ts";
import { randomUuid } from "../../../shared/node/random-uuid.ts";
import { Backoff } from "../../../shared/time/backoff.ts";
import type { Heartbeat, KeysUp, Status, UpMessage } from "../../../shared/wire/messages.ts";
import { parseTopic, topicFor } from "../../../shared/wire/topics.ts";
import type { BrokerLink, BrokerLinkEvents, Clock, TimerHandle } from "../../ports.ts";
import { emitDownMessage } from "./down-messages.ts";

/** Node and esbuild give this CommonJS module's exports object, vite (vitest) its `default` export: the class either way. */
const MqttClient: typeof Client =
  "default" in mqttClient ? mqttClient.default : (mqttClient as unknown as typeof Client);

/** How long a stop waits for the broker to take the `offline` status before it ends the client by force. */
const STOP_GRACE_MS = 2_000;
/** How long `online` waits for the cloud's answer before it is said again; each wait doubles, up to the max. */
export const ANNOUNCE_ANSWER_MS = 10_000;
const ANNOUNCE_MAX_MS = 300_000;

export type MqttBrokerLinkOptions = {
  url: string;
  prefix: string;
  gatewayId: string;
  password: string;
  clock: Clock;
  log: Logger;
  /** Reconnect backoff bounds; each wait is drawn at random up to the current bound (full jitter). */
  minReconnectMs?: number;
  maxReconnectMs?: number;
  /** The draw of that jitter, in [0, 1] (default Math.random). */
  jitter?: () => number;
};

/**
 * The BrokerLink port over mqtt.js, the gateway's end of the wire: a persistent MQTT session (clean: false, QoS 1) so commands queued
 * while it was away are delivered on return; a retained `online` status with an `offline` Last Will so
 * the cloud knows at once when it drops (ARCHITECTURE: wire principles). Every payload is validated
 * with its shared schema; anything else is logged and dropped.
 */
export class MqttBrokerLink extends EventEmitter<BrokerLinkEvents> implements BrokerLink {
  private client: Client | null = null;
  private reconnects: { stop(): void } | null = null;
  connectedSince: string | null = null;
  /** This session's token, sent with `online`; the cloud's ack echoing it is fresh (docs/decisions/clock.md). */
  private sync: string | undefined;
  /** Says `online` again while the cloud has not answered it. */
  private announce: TimerHandle | null = null;

  constructor(private readonly options: MqttBrokerLinkOptions) {
    super();
    this.on("cloudTime", (_sentAt, fresh) => {
      if (fresh) this.stopAnnouncing();
    });
  }

  get connected(): boolean {
    return this.client?.connected ?? false;
  }

  private status(online: boolean): string {
    const s: Status = {
      gateway_id: this.options.gatewayId,
      online,
      at: this.options.clock.now().toISOString(),
      ...(this.sync ? { sync: this.sync } : {}),
    };
    return JSON.stringify(s);
  }

  start(): void {
    const u = new URL(this.options.url);
    const topic = (c: Parameters<typeof topicFor>[2]) =>
      topicFor(this.options.prefix, this.options.gatewayId, c);
    const client = new MqttClient(
      (c) => {
        // Each connection is a session of its own: a new token, carried by its Last Will too, so the cloud
        // tells a Will of an earlier session that the broker publishes late from this one's (wire.md).
        this.sync = randomUuid();
        if (c.options.will) c.options.will.payload = Buffer.from(this.status(false));
        const socket = net.createConnection({ host: u.hostname, port: Number(u.port || 1883) });
        socket.setNoDelay(true); // Nagle would add ~40–90 ms to every hop (ARCHITECTURE: measured floors)
        return socket;
      },
      {
        protocolVersion: 4,
        clientId: this.options.gatewayId,
        username: this.options.gatewayId,
        password: this.options.password,
        clean: false,
        keepalive: 15,
        connectTimeout: 5_000,
        reconnectPeriod: 0, // reconnects wait on the injected clock, with backoff (below)
        queueQoSZero: false, // heartbeats are ephemeral: never queued while offline
        // mqtt-packet's table of 65,536 prebuilt number buffers is ~6.5 MB of a controller's heap; a
        // gateway's few messages a second can encode their numbers as they go (README: gateway footprint).
        writeCache: false,
        will: { topic: topic("status"), payload: Buffer.from(this.status(false)), qos: 1, retain: true },
      },
    );
    this.client = client;
    this.reconnects = reconnectWithBackoff(client, {
      clock: this.options.clock,
      minMs: this.options.minReconnectMs ?? 1_000,
      maxMs: this.options.maxReconnectMs ?? 30_000,
      jitter: this.options.jitter ?? Math.random,
      onWait: (ms) =>
        this.options.log.info({ broker: this.options.url, retry_in_ms: ms }, "broker unreachable: retrying"),
    });
    // The session begins with the broker's CONNACK, before anything it kept for us is handled: those copies
    // may be old. Not on "connect": MQTT.js says that only once the reports in flight when the last
    // connection dropped are sent again and acknowledged, one at a time, and the kept commands come meanwhile.
    client.on("packetreceive", (packet) => {
      if (packet.cmd === "connack") this.emit("session");
    });
    client.on("connect", () => {
      this.connectedSince = this.options.clock.now().toISOString();
      this.options.log.info({ broker: this.options.url }, "broker connected");
      client.subscribe(
        {
          [topic("cmd")]: { qos: 1 },
          [topic("ack")]: { qos: 1 },
          [topic("config")]: { qos: 1 },
          [topic("keys")]: { qos: 1 },
        },
        (err) => {
          // Fails only when the connection dropped meanwhile; the next connect subscribes again.
          if (err && this.client !== client) return; // stopped meanwhile: nothing to subscribe for
          if (err) return this.options.log.warn({ err: err.message }, "subscription failed");
          // Announced only once subscribed: the cloud delivers what waits for this gateway when it hears
          // `online`, so nothing may arrive before we listen. Re-announced on every connect, so a broker
          // restart never leaves a stale retained `offline` (F5).
          client.publish(topic("status"), this.status(true), { qos: 1, retain: true });
          this.announceUntilAnswered(client, topic("status"));
          this.emit("connected");
        },
      );
    });
    client.on("close", () => {
      this.stopAnnouncing();
      if (this.connectedSince) this.emit("disconnected");
      this.connectedSince = null;
    });
    client.on("error", (err) => {
      // Once stop() has begun, what the ending client refuses ("write after end") is the stop itself.
      if (this.client !== client) this.options.log.debug({ err: err.message }, "broker error while stopping");
      else this.options.log.warn({ err: err.message }, "broker error");
    });
    client.on("message", (t, payload) => this.onMessage(t, payload));
  }

  /**
   * Says `online` again, with this session's token, until the cloud answers it (its echo of the token): a
   * broker that took it may lose it (a restart without persistence, with the retained copy), and the cloud
   * would hold this gateway offline, its map and waiting commands unsent, until the next connect. An older
   * cloud that never answers hears it again at most every ANNOUNCE_MAX_MS; a second `online` of one
   * session changes nothing there (a command delivered again is not run again).
   */
  private announceUntilAnswered(client: Client, statusTopic: string): void {
    this.stopAnnouncing();
    const sync = this.sync;
    const waits = new Backoff({ minMs: ANNOUNCE_ANSWER_MS, maxMs: ANNOUNCE_MAX_MS });
    const wait = () => {
      const ms = waits.next();
      this.announce = this.options.clock.setTimer(ms, () => {
        this.announce = null;
        if (this.client !== client || !client.connected || this.sync !== sync) return;
        this.options.log.info({ waited_ms: ms }, "the cloud has not answered online: announcing again");
        client.publish(statusTopic, this.status(true), { qos: 1, retain: true });
        wait();
      });
    };
    wait();
  }

  private stopAnnouncing(): void {
    if (this.announce) this.options.clock.clearTimer(this.announce);
    this.announce = null;
  }

  private onMessage(topic: string, payload: Buffer) {
    const t = parseTopic(this.options.prefix, topic);
    if (!t || t.gatewayId !== this.options.gatewayId) return;
    let refused: ReturnType<typeof emitDownMessage>;
    try {
      refused = emitDownMessage(this, this.options.gatewayId, t.channel, payload.toString("utf8"), this.sync);
    } catch (err) {
      // A handler that could not act (an ack it cannot record with the state disk full) must not take the
      // daemon down with the MQTT client: what it did not record is sent, or asked for, again.
      this.options.log.error({ err, topic }, "message not handled");
      return;
    }
    if (refused) this.options.log.warn({ topic, issues: refused.issues }, refused.dropped);
  }

  /** QoS 1 publish of an outbox message; resolves on the broker's PUBACK. */
  async publishUp(msg: UpMessage): Promise<void> {
    if (!this.client) throw new Error("broker not started");
    await this.client.publishAsync(
      topicFor(this.options.prefix, this.options.gatewayId, "up"),
      JSON.stringify(msg),
      {
        qos: 1,
      },
    );
  }

  /** QoS 0 and only while connected: a heartbeat that cannot go now is worthless later. */
  publishHeartbeat(hb: Heartbeat): boolean {
    if (!this.client?.connected) return false;
    this.client.publish(topicFor(this.options.prefix, this.options.gatewayId, "hb"), JSON.stringify(hb), {
      qos: 0,
    });
    return true;
  }

  /**
   * QoS 1, but only while connected and never queued by us: a version report or a card query is sent
   * again when it matters (on the next connect, or not at all for a tap long decided).
   */
  publishKeysReport(msg: KeysUp): boolean {
    if (!this.client?.connected) return false;
    this.client.publish(
      topicFor(this.options.prefix, this.options.gatewayId, "keys_report"),
      JSON.stringify(msg),
      {
        qos: 1,
      },
    );
    return true;
  }

  /** Graceful stop: announce offline ourselves (the Last Will fires only on an unclean drop). */
  async stop(): Promise<void> {
    const client = this.client;
    if (!client) return;
    this.client = null;
    this.stopAnnouncing();
    this.reconnects?.stop();
    this.reconnects = null;
    // A link that looks up may be a black hole (a modem that stopped passing bytes, not yet noticed by
    // keep-alive): `offline` gets a moment, then the client ends by force rather than wait on its PUBACK
    // and in-flight publishes that cannot complete (the outbox keeps them). A stop must not hang.
    const said =
      client.connected &&
      (await this.within(
        STOP_GRACE_MS,
        client.publishAsync(
          topicFor(this.options.prefix, this.options.gatewayId, "status"),
          this.status(false),
          {
            qos: 1,
            retain: true,
          },
        ),
      ));
    await client.endAsync(!said);
  }

  /** True when `p` fulfils within `ms` on the injected clock; false when it fails or time runs out. */
  private within(ms: number, p: Promise<unknown>): Promise<boolean> {
    return new Promise((resolve) => {
      const timer = this.options.clock.setTimer(ms, () => resolve(false));
      p.then(
        () => resolve(true),
        () => resolve(false),
      ).finally(() => this.options.clock.clearTimer(timer));
    });
  }
}
