import { EventEmitter } from "node:events";
import { emitDownMessage } from "../../gateway/adapters/mqtt/down-messages.ts";
import type { BrokerLink, BrokerLinkEvents, Clock } from "../../gateway/ports.ts";
import type {
  AccessDecision,
  DeviceMap,
  Grant,
  Heartbeat,
  KeysDown,
  KeysUp,
  Status,
  UpMessage,
} from "../../shared/wire/messages.ts";
import type { DownChannel, UpChannel } from "../../shared/wire/topics.ts";
import { Signal } from "./signal.ts";

type Query = Extract<KeysUp, { kind: "query" }>;

/**
 * One gateway's place on a broker, without a broker: its persistent session (what the cloud sends while no
 * link is connected waits, in order, for the next one) and what the cloud hears on the gateway's up channels.
 */
export class StandInWire {
  private readonly heardOn = new Map<UpChannel, unknown[]>();
  private readonly waiting: { channel: DownChannel; payload: string }[] = [];
  private link: StandInBrokerLink | null = null;
  readonly signal = new Signal();

  constructor(readonly gatewayId: string) {}

  /** The cloud publishes on one of the gateway's down channels (any payload: the link validates it). */
  send(channel: DownChannel, payload: string): void {
    if (this.link?.connected) this.link.receive(channel, payload);
    else this.waiting.push({ channel, payload });
  }

  /** What the cloud heard on an up channel so far, parsed, oldest first. */
  heard(channel: UpChannel): unknown[] {
    const got = this.heardOn.get(channel) ?? [];
    this.heardOn.set(channel, got);
    return got;
  }

  /** A link's session began: it takes over the session and gets what waited for it. */
  attach(link: StandInBrokerLink): void {
    this.link = link;
    for (const m of this.waiting.splice(0)) link.receive(m.channel, m.payload);
  }

  publish(channel: UpChannel, payload: string): void {
    this.heard(channel).push(JSON.parse(payload));
    this.signal.notify();
  }
}

export type StandInOptions = {
  /** The wire this link sits on; shared by links that follow each other (a restarted daemon). */
  wire?: StandInWire;
  /** Connect as soon as the gateway starts the link, as a broker that is up would; default: when the test says. */
  connectOnStart?: boolean;
  /**
   * Tell `session` on each connect, before what waited is delivered, as a broker link does. Off in the
   * gateway suites: no cloud answers their sessions, so their commands are judged at once, as within one.
   */
  sessions?: boolean;
};

/**
 * The BrokerLink port without a broker: the test plays the cloud. It connects and drops the session at
 * will, delivers device maps and keys messages, answers card queries, acknowledges what the outbox pump
 * publishes (as the cloud would), and records every up-message, keys report and heartbeat. It passes the
 * port's contract (test/contracts/broker-link.test.ts): payloads validated as the MQTT link validates them,
 * `online`/`offline` announced, a session that keeps what the cloud sent while it was away.
 */
export class StandInBrokerLink extends EventEmitter<BrokerLinkEvents> implements BrokerLink {
  connected = false;
  connectedSince: string | null = null;
  /** Outbox messages published, in order (each once: the stand-in acknowledges them). */
  readonly up: UpMessage[] = [];
  readonly keysReports: KeysUp[] = [];
  readonly heartbeats: Heartbeat[] = [];
  /** Down-messages that failed validation, with why. */
  readonly dropped: { dropped: string; issues?: unknown }[] = [];
  /**
   * How the "cloud" answers a card query: the card's grants, or null to stay silent (the gateway's
   * deadline then runs out). Silent by default.
   */
  answer: (q: Query) => Grant[] | null = () => null;
  readonly wire: StandInWire;
  private readonly signal = new Signal();

  constructor(
    private readonly clock: Clock,
    readonly gatewayId: string,
    private readonly options: StandInOptions = {},
  ) {
    super();
    this.wire = options.wire ?? new StandInWire(gatewayId);
  }

  start(): void {
    if (this.options.connectOnStart) queueMicrotask(() => this.connect());
  }

  /** Says `offline` and ends the session (as disconnect(): a broker's Last Will says the same). */
  stop(): Promise<void> {
    this.disconnect();
    return Promise.resolve();
  }

  connect(): void {
    if (this.connected) return;
    this.connected = true;
    this.connectedSince = this.clock.now().toISOString();
    if (this.options.sessions) this.emit("session");
    this.wire.attach(this);
    this.announce(true);
    this.emit("connected");
    this.signal.notify();
  }

  /** The session drops: `offline` is heard, and what the cloud sends meanwhile waits in the wire's session. */
  disconnect(): void {
    if (!this.connected) return;
    this.connected = false;
    this.connectedSince = null;
    this.announce(false);
    this.emit("disconnected");
  }

  /** A payload on one of this gateway's down channels, from the wire. */
  receive(channel: DownChannel, payload: string): void {
    const refused = emitDownMessage(this, this.gatewayId, channel, payload);
    if (refused) this.dropped.push(refused);
    this.signal.notify();
  }

  publishUp(msg: UpMessage): Promise<void> {
    if (!this.connected) return Promise.reject(new Error("not connected"));
    this.up.push(msg);
    this.wire.publish("up", JSON.stringify(msg));
    queueMicrotask(() => this.emit("ack", [msg.seq], false, msg.outbox_id ?? ""));
    this.signal.notify();
    return Promise.resolve();
  }

  publishHeartbeat(hb: Heartbeat): boolean {
    if (!this.connected) return false;
    this.heartbeats.push(hb);
    this.wire.publish("hb", JSON.stringify(hb));
    return true;
  }

  publishKeysReport(msg: KeysUp): boolean {
    if (!this.connected) return false;
    this.keysReports.push(msg);
    this.wire.publish("keys_report", JSON.stringify(msg));
    if (msg.kind === "query") {
      const grants = this.answer(msg);
      if (grants)
        setImmediate(() =>
          this.deliver({
            kind: "answer",
            gateway_id: msg.gateway_id,
            query_id: msg.query_id,
            card_id: msg.card_id,
            grants,
          }),
        );
    }
    this.signal.notify();
    return true;
  }

  /** A message on the gateway's `keys` channel, at once (the test's shortcut past the session). */
  deliver(msg: KeysDown): void {
    this.receive("keys", JSON.stringify(msg));
  }

  /** The retained device map arriving, at once (as the gateway loads a stored one before it connects). */
  sendMap(map: DeviceMap): void {
    this.receive("config", JSON.stringify(map));
  }

  /** Access decisions published so far. */
  decisions(): AccessDecision[] {
    return this.up.filter((m): m is AccessDecision => m.type === "access_decision");
  }

  /** The card queries sent so far. */
  queries(): Query[] {
    return this.keysReports.filter((r): r is Query => r.kind === "query");
  }

  /** The versions reported so far. */
  versions(): number[] {
    return this.keysReports.flatMap((r) => (r.kind === "version" ? [r.version] : []));
  }

  /** Resolves once `done()` holds; checked after every message either way. */
  until(done: () => boolean): Promise<void> {
    return this.signal.until(done);
  }

  private announce(online: boolean): void {
    const status: Status = { gateway_id: this.gatewayId, online, at: this.clock.now().toISOString() };
    this.wire.publish("status", JSON.stringify(status));
  }
}
