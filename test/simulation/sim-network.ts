import { EventEmitter } from "node:events";
import net from "node:net";
import { type Duplex, duplexPair } from "node:stream";

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

/** One direction of a connection: chunks in order, each passed on at `at` (virtual ms) unless held. */
type Lane = {
  queue: { chunk: Buffer; at: number }[];
  to: Duplex;
  timer: ReturnType<typeof setTimeout> | null;
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
    const up: Lane = { queue: [], to: serverWire, timer: null };
    const down: Lane = { queue: [], to: clientWire, timer: null };
    const c: Connection = { ends: [client, clientWire, serverWire, server], lanes: [up, down], port, owner };
    this.open.add(c);
    clientWire.on("data", (chunk: Buffer) => this.send(up, chunk, owner));
    serverWire.on("data", (chunk: Buffer) => this.send(down, chunk, owner));
    // A connection closed at one end is closed at the other, as a FIN or RST ends it for both.
    for (const end of [client, server]) end.once("close", () => this.close(c));
    if (handler) process.nextTick(() => handler(socketLike(server, this.nextPort++)));
    // With no broker and a partition, the dial hangs unanswered until the client's own timeout.
    return socketLike(client, port);
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
