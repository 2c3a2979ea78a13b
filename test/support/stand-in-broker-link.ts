import { EventEmitter } from "node:events";
import type { BrokerLink, BrokerLinkEvents, Clock } from "../../gateway/ports.ts";
import type {
  AccessDecision,
  DeviceMap,
  Grant,
  Heartbeat,
  KeysDown,
  KeysUp,
  UpMessage,
} from "../../shared/wire/messages.ts";
import { Signal } from "./signal.ts";

type Query = Extract<KeysUp, { kind: "query" }>;

/**
 * The BrokerLink port without a broker: the test plays the cloud. It connects and drops the session at
 * will, delivers device maps and keys messages, answers card queries, acknowledges what the outbox pump
 * publishes (as the cloud would), and records every up-message, keys report and heartbeat.
 */
export class StandInBrokerLink extends EventEmitter<BrokerLinkEvents> implements BrokerLink {
  connected = false;
  connectedSince: string | null = null;
  /** Outbox messages published, in order (each once: the stand-in acknowledges them). */
  readonly up: UpMessage[] = [];
  readonly keysReports: KeysUp[] = [];
  readonly heartbeats: Heartbeat[] = [];
  /**
   * How the "cloud" answers a card query: the card's grants, or null to stay silent (the gateway's
   * deadline then runs out). Silent by default.
   */
  answer: (q: Query) => Grant[] | null = () => null;
  private readonly signal = new Signal();

  constructor(private readonly clock: Clock) {
    super();
  }

  /** The gateway's start: the session comes only when the test calls connect(). */
  start(): void {}

  stop(): Promise<void> {
    this.disconnect();
    return Promise.resolve();
  }

  connect(): void {
    if (this.connected) return;
    this.connected = true;
    this.connectedSince = this.clock.now().toISOString();
    this.emit("connected");
    this.signal.notify();
  }

  disconnect(): void {
    if (!this.connected) return;
    this.connected = false;
    this.connectedSince = null;
    this.emit("disconnected");
  }

  publishUp(msg: UpMessage): Promise<void> {
    if (!this.connected) return Promise.reject(new Error("not connected"));
    this.up.push(msg);
    queueMicrotask(() => this.emit("ack", [msg.seq], false, msg.outbox_id ?? ""));
    this.signal.notify();
    return Promise.resolve();
  }

  publishHeartbeat(hb: Heartbeat): boolean {
    if (!this.connected) return false;
    this.heartbeats.push(hb);
    return true;
  }

  publishKeysReport(msg: KeysUp): boolean {
    if (!this.connected) return false;
    this.keysReports.push(msg);
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

  /** A message on the gateway's `keys` channel. */
  deliver(msg: KeysDown): void {
    this.emit("keys", msg);
    this.signal.notify();
  }

  /** The retained device map arriving. */
  sendMap(map: DeviceMap): void {
    this.emit("deviceMap", map);
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
}
