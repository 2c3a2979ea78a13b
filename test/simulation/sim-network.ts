import { EventEmitter } from "node:events";
import net from "node:net";
import { type Duplex, duplexPair } from "node:stream";
import { generate, type IPublishPacket, type Packet, parser } from "mqtt-packet";

type Handler = (socket: Duplex) => void;

/** A socket end as the broker and mqtt.js use one: a Duplex with the few net.Socket members they call. */
function socketLike(end: Duplex, remotePort: number): Duplex {
  return Object.assign(end, {
    remoteAddress: "10.0.0.2",
    remotePort,
    setNoDelay: () => end,
    setKeepAlive: () => end,
    setTimeout: () => end,
  });
}

/**
 * What becomes of one message (an MQTT PUBLISH) on a link with message faults, as a broker that accepted
 * it may do: pass it, lose it (its sender still gets its PUBACK), deliver it twice (the second copy
 * `afterMs` later, as a QoS 1 resend, and its sender gets one PUBACK), or deliver it late, after messages
 * sent since.
 */
export type MessageFate =
  | { kind: "pass" }
  | { kind: "drop" }
  | { kind: "twice"; afterMs: number }
  | { kind: "late"; afterMs: number };
export type MessageFault = (direction: "up" | "down", message: IPublishPacket) => MessageFate;

/**
 * One direction of a connection: chunks in order, each passed on at `at` (virtual ms) unless held. Its
 * bytes are read as MQTT packets, so that single messages can be lost, repeated or held back.
 */
type Lane = {
  direction: "up" | "down";
  queue: { chunk: Buffer; at: number }[];
  to: Duplex;
  timer: ReturnType<typeof setTimeout> | null;
  packets: ReturnType<typeof parser>;
  /** PUBACKs not to pass on: a message delivered twice is acknowledged to its sender once. */
  swallow: Set<number>;
};

/** One connection: the ends its two parties hold, the lanes between them, and whose it is. */
type Connection = { ends: Duplex[]; lanes: Lane[]; port: number; owner: string };

/**
 * The network of a simulated run, in memory: the broker listens on a port, the cloud and gateways dial it
 * (each names itself by the host it dials: `gw-1.sim`), and bytes cross on the virtual clock. A party's
 * link can be cut (both ends see the connection close, as on a reset), partitioned (bytes stop silently
 * both ways and dials go unanswered; what was sent meanwhile arrives when it heals, unless a side gave up
 * on the connection first), or slowed (each chunk takes `latencyMs`, order kept).
 */
export class SimNetwork {
  private readonly listeners = new Map<number, Handler>();
  private readonly open = new Set<Connection>();
  private readonly partitioned = new Set<string>();
  private readonly latency = new Map<string, number>();
  private readonly faults = new Map<string, MessageFault>();
  private nextPort = 20_000;
  private saved: {
    createServer: typeof net.createServer;
    createConnection: typeof net.createConnection;
  } | null = null;

  /** Routes node:net's createServer and createConnection here until uninstall(). */
  install(): void {
    this.saved = { createServer: net.createServer, createConnection: net.createConnection };
    const self = this;
    Object.assign(net, {
      createServer(...args: unknown[]) {
        return self.server(args.find((a) => typeof a === "function") as Handler);
      },
      createConnection(opts: { host: string; port: number }) {
        return self.dial(opts.host, Number(opts.port));
      },
    });
  }

  uninstall(): void {
    if (this.saved) Object.assign(net, this.saved);
  }

  /** Closes every connection of `owner`; returns how many. */
  cut(owner: string): number {
    const mine = [...this.open].filter((c) => c.owner === owner);
    for (const c of mine) this.close(c);
    return mine.length;
  }

  /** Bytes of `owner` stop (on) or flow again, held ones first (off). */
  partition(owner: string, on: boolean): void {
    if (on) this.partitioned.add(owner);
    else this.partitioned.delete(owner);
    if (!on) for (const c of this.open) if (c.owner === owner) for (const l of c.lanes) this.pump(l, owner);
  }

  /** Each chunk of `owner`'s connections takes this long from now on (0: at once). */
  slow(owner: string, ms: number): void {
    this.latency.set(owner, ms);
  }

  /** Each message on `owner`'s connections meets `fault` from now on (null: every message passes). */
  messages(owner: string, fault: MessageFault | null): void {
    if (fault) this.faults.set(owner, fault);
    else this.faults.delete(owner);
  }

  private server(handler: Handler) {
    let port = 0;
    return Object.assign(new EventEmitter(), {
      listen: (p: number, _host: string, cb: () => void) => {
        port = p || this.nextPort++;
        this.listeners.set(port, handler);
        queueMicrotask(cb);
      },
      address: () => ({ port, address: "127.0.0.1", family: "IPv4" }),
      close: (cb?: () => void) => {
        this.listeners.delete(port);
        for (const c of [...this.open]) if (c.port === port) this.close(c);
        queueMicrotask(() => cb?.());
      },
    });
  }

  private dial(host: string, port: number): Duplex {
    const owner = host.replace(/\.sim$/, "");
    const [client, clientWire] = duplexPair();
    const handler = this.listeners.get(port);
    if (!handler && !this.partitioned.has(owner)) {
      process.nextTick(() =>
        client.destroy(Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" })),
      );
      return socketLike(client, port);
    }
    const [serverWire, server] = duplexPair();
    const up = this.lane("up", serverWire);
    const down = this.lane("down", clientWire);
    const c: Connection = { ends: [client, clientWire, serverWire, server], lanes: [up, down], port, owner };
    this.open.add(c);
    up.packets.on("packet", (p: Packet) => this.onPacket(up, down, p, owner));
    down.packets.on("packet", (p: Packet) => this.onPacket(down, up, p, owner));
    clientWire.on("data", (chunk: Buffer) => up.packets.parse(chunk));
    serverWire.on("data", (chunk: Buffer) => down.packets.parse(chunk));
    // A connection closed at one end is closed at the other, as a FIN or RST ends it for both.
    for (const end of [client, server]) end.once("close", () => this.close(c));
    if (handler) process.nextTick(() => handler(socketLike(server, this.nextPort++)));
    // With no broker and a partition, the dial hangs unanswered until the client's own timeout.
    return socketLike(client, port);
  }

  private lane(direction: Lane["direction"], to: Duplex): Lane {
    const packets = parser({ protocolVersion: 4 });
    packets.on("error", (err: Error) => to.destroy(err));
    return { direction, queue: [], to, timer: null, packets, swallow: new Set() };
  }

  /** One packet read from `lane`: passed on, or met by its owner's message fault if it is a message. */
  private onPacket(lane: Lane, back: Lane, p: Packet, owner: string): void {
    if (p.cmd === "puback" && p.messageId !== undefined && lane.swallow.delete(p.messageId)) return;
    const fault = this.faults.get(owner);
    const fate: MessageFate = p.cmd === "publish" && fault ? fault(lane.direction, p) : { kind: "pass" };
    const pass = (m: Packet) => this.send(lane, generate(m), owner);
    if (fate.kind === "pass" || p.cmd !== "publish") pass(p);
    else if (fate.kind === "late") setTimeout(() => pass(p), fate.afterMs);
    else if (fate.kind === "drop") {
      if (p.qos > 0) this.send(back, generate({ cmd: "puback", messageId: p.messageId }), owner);
    } else {
      pass(p);
      if (p.qos > 0 && p.messageId !== undefined) back.swallow.add(p.messageId);
      setTimeout(() => pass({ ...p, dup: p.qos > 0 }), fate.afterMs);
    }
  }

  private send(lane: Lane, chunk: Buffer, owner: string): void {
    const last = lane.queue.at(-1)?.at ?? 0;
    lane.queue.push({ chunk, at: Math.max(last, Date.now() + (this.latency.get(owner) ?? 0)) });
    this.pump(lane, owner);
  }

  private pump(lane: Lane, owner: string): void {
    if (lane.timer || this.partitioned.has(owner)) return;
    const head = lane.queue[0];
    if (!head) return;
    const wait = head.at - Date.now();
    if (wait > 0) {
      lane.timer = setTimeout(() => {
        lane.timer = null;
        this.pump(lane, owner);
      }, wait);
      return;
    }
    lane.queue.shift();
    if (!lane.to.destroyed) lane.to.write(head.chunk);
    this.pump(lane, owner);
  }

  private close(c: Connection): void {
    if (!this.open.delete(c)) return;
    for (const l of c.lanes) if (l.timer) clearTimeout(l.timer);
    for (const end of c.ends) end.destroy();
  }
}
