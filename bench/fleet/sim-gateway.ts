/**
 * One simulated gateway: the real gateway's wire end (gateway/adapters/mqtt/broker-mqtt.ts: persistent session,
 * retained `online` status and `offline` Last Will, subscriptions on cmd/ack/config/keys, schema-checked
 * down messages) and its real outbox pump (gateway/features/outbox-pump.ts: seq order, QoS 1, delete on
 * ack, resend what stays unacknowledged), over an in-memory outbox and hardware that answers at once.
 */
import type { Logger } from "pino";
import { MqttBrokerLink } from "../../gateway/adapters/mqtt/broker-mqtt.ts";
import { createOutboxPump } from "../../gateway/features/outbox-pump.ts";
import type { Clock } from "../../gateway/ports.ts";
import { systemMonotonic } from "../../shared/node/system-clock.ts";
import { packageVersion } from "../../shared/node/version.ts";
import type { CommandRequest, DeviceMap, KeysDown, UpMessage } from "../../shared/wire/messages.ts";
import { MemoryOutbox } from "./memory-outbox.ts";

/** What the whole simulated fleet counts, for the runner's report. */
export type FleetCounters = {
  heartbeats: number;
  commands: number;
  /** QoS 1 publishes of outbox messages: first sends and resends. */
  upPublished: number;
  /** Connections lost after they were up (keepalive timeouts, a broker or cloud falling over). */
  disconnects: number;
};

const LOCK_STATE_AFTER: Partial<Record<CommandRequest["name"], "LOCKED" | "UNLOCKED">> = {
  lock: "LOCKED",
  "force-lock": "LOCKED",
  unlock: "UNLOCKED",
  "force-unlock": "UNLOCKED",
};

type Outcome = { state: "SUCCESS" | "ERROR"; reason: string; lockState?: "LOCKED" | "UNLOCKED" };

/** Counts every outbox publish, so the fleet can tell resends from first sends. */
class CountingLink extends MqttBrokerLink {
  constructor(
    o: ConstructorParameters<typeof MqttBrokerLink>[0],
    private readonly counters: FleetCounters,
  ) {
    super(o);
  }
  override publishUp(msg: UpMessage): Promise<void> {
    this.counters.upPublished++;
    return super.publishUp(msg);
  }
}

export class SimGateway {
  readonly link: CountingLink;
  readonly outbox: MemoryOutbox;
  private readonly pump: ReturnType<typeof createOutboxPump>;
  /** The lockers (every device but the GUARD) of the last device map, with their channel. */
  private devices: { id: string; channel: number }[] = [];
  private mapped = false;
  private keyVersion = 0;
  private readonly doors = new Map<string, boolean>();
  /** Outcomes of the commands seen, so a redelivered command is reported again, never run again. */
  private readonly outcomes = new Map<string, Outcome>();
  everConnected = false;
  /** What its heartbeats say of the daemon (an older cloud's schema drops it). */
  private readonly runtime = { version: packageVersion(), started_at: new Date().toISOString() };

  constructor(
    readonly id: string,
    o: {
      url: string;
      prefix: string;
      password: string;
      clock: Clock;
      log: Logger;
      counters: FleetCounters;
      /** The outbox identity its messages and heartbeats carry; null where the wire has none. */
      outboxId: string | null;
    },
  ) {
    this.link = new CountingLink(
      { url: o.url, prefix: o.prefix, gatewayId: id, password: o.password, clock: o.clock, log: o.log },
      o.counters,
    );
    this.outbox = new MemoryOutbox(id, o.clock, o.outboxId);
    this.pump = createOutboxPump({
      outbox: this.outbox,
      broker: this.link,
      clock: o.clock,
      monotonic: systemMonotonic,
      log: o.log,
    });
    this.link.on("connected", () => {
      this.everConnected = true;
      // What the real daemon does on every connect: a heartbeat at once and the key version it holds.
      this.heartbeat(o.counters);
      this.link.publishKeysReport({ kind: "version", gateway_id: id, version: this.keyVersion });
    });
    this.link.on("disconnected", () => o.counters.disconnects++);
    this.link.on("deviceMap", (m) => this.onDeviceMap(m));
    this.link.on("command", (c) => {
      o.counters.commands++;
      this.onCommand(c, o.clock);
    });
    this.link.on("keys", (k) => this.onKeys(k));
  }

  /** Connected and holding its device map: what a gateway needs before it reports anything useful. */
  get ready(): boolean {
    return this.link.connected && this.mapped;
  }

  start(): void {
    this.pump.start();
    this.link.start();
  }

  /**
   * Every locker of the map, all reachable, where the outbox stands and the daemon's version and start (QoS 0,
   * only while connected: gateway/features/heartbeat.ts).
   */
  heartbeat(counters: FleetCounters): boolean {
    const { identity } = this.outbox;
    const sent = this.link.publishHeartbeat({
      gateway_id: this.id,
      sent_at: new Date().toISOString(),
      devices: this.devices.map((d) => ({ device_id: d.id, reachable: true })),
      ...(identity
        ? {
            outbox: {
              id: identity,
              unconfirmed_from: this.outbox.unconfirmedFrom(),
              depth: this.outbox.depth(),
            },
          }
        : {}),
      runtime: this.runtime,
    });
    if (sent) counters.heartbeats++;
    return sent;
  }

  /** A door opened or closed by hand: the board's event and the sensor reading it changes. */
  doorEvent(): void {
    const d = this.devices[Math.floor(Math.random() * this.devices.length)];
    if (!d) return;
    const open = !(this.doors.get(d.id) ?? false);
    this.doors.set(d.id, open);
    this.outbox.append({
      type: "hardware_event",
      device_id: d.id,
      source: `bus0/1/${d.channel}`,
      event: open ? "door_opened" : "door_closed",
      detail: "",
    });
    this.outbox.append({
      type: "device_state",
      device_id: d.id,
      door_open: open,
      cause: "hardware_event",
      detail: "",
    });
  }

  private onDeviceMap(map: DeviceMap): void {
    const first = !this.mapped;
    this.devices = map.devices
      .filter((d) => d.type !== "GUARD")
      .map((d) => ({ id: d.device_id, channel: d.bus?.channel ?? 0 }));
    this.mapped = true;
    if (!first) return;
    // A new map makes the gateway read the hardware it now drives and report it.
    for (const d of this.devices) {
      this.doors.set(d.id, false);
      this.outbox.append({
        type: "device_state",
        device_id: d.id,
        lock_state: "UNLOCKED",
        door_open: false,
        item_present: false,
        cause: "device_map",
        detail: "",
      });
    }
  }

  /** RECEIVED when taken, then the outcome at once (the hardware moves in no time), as the daemon reports them. */
  private onCommand(req: CommandRequest, clock: Clock): void {
    const seen = this.outcomes.get(req.command_id);
    if (seen) {
      this.report(req, seen);
      return;
    }
    let outcome: Outcome;
    if (clock.now().getTime() >= Date.parse(req.expires_at)) {
      outcome = { state: "ERROR", reason: "the command arrived after its deadline and was not executed" };
    } else if (!this.devices.some((d) => d.id === req.device_id)) {
      outcome = { state: "ERROR", reason: "unknown device" };
    } else {
      this.outbox.append({
        type: "command_progress",
        command_id: req.command_id,
        device_id: req.device_id,
        state: "RECEIVED",
        reason: "",
      });
      const lockState = LOCK_STATE_AFTER[req.name];
      outcome = { state: "SUCCESS", reason: "", ...(lockState ? { lockState } : {}) };
    }
    this.outcomes.set(req.command_id, outcome);
    this.report(req, outcome);
  }

  private report(req: CommandRequest, o: Outcome): void {
    this.outbox.append({
      type: "command_progress",
      command_id: req.command_id,
      device_id: req.device_id,
      state: o.state,
      reason: o.reason,
      ...(o.lockState ? { lock_state: o.lockState } : {}),
    });
  }

  /** Holds no grants, only the version, and reports it as the daemon's key sync does. */
  private onKeys(msg: KeysDown): void {
    if (msg.kind === "answer") return;
    if (msg.kind === "delta" && msg.base_version === this.keyVersion) this.keyVersion = msg.version;
    if (msg.kind === "snapshot") {
      if (msg.part < msg.parts) return;
      this.keyVersion = msg.version;
    }
    this.link.publishKeysReport({ kind: "version", gateway_id: this.id, version: this.keyVersion });
  }
}
