import { once } from "node:events";
import net from "node:net";

/** How the link between the daemon and its broker behaves. */
export type LinkMode =
  | { kind: "pass" }
  /** A stalled mobile modem: nothing moves either way, both sockets stay open, nothing is lost. */
  | { kind: "blackhole" }
  /**
   * A bad mobile link: each chunk waits `latencyMs` plus up to `jitterMs`, the bytes go through at
   * `bytesPerSecond` at most (in order), and about every `resetEveryMs` one connection is reset.
   */
  | { kind: "lossy"; latencyMs: number; jitterMs: number; bytesPerSecond: number; resetEveryMs: number };

/** A small seeded PRNG (mulberry32): the same seed gives the same faults. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/** One direction of a connection: delivers chunks in order, after the mode's delay and throttle. */
class Pipe {
  private freeAt = 0; // when the throttled line is free again (ms, Date.now's scale)
  private pending = 0; // chunks scheduled but not yet written
  private readonly held: Buffer[] = []; // what a stalled link has not moved yet
  to: net.Socket | null = null; // null until the proxy has connected upstream

  constructor(
    from: net.Socket,
    private readonly proxy: FaultProxy,
  ) {
    from.on("data", (chunk: Buffer) => {
      if (this.proxy.mode.kind === "blackhole" || !this.to) this.held.push(chunk);
      else this.carry(chunk);
    });
  }

  /** Moves what the stalled link held back, in order. */
  release(): void {
    for (const chunk of this.held.splice(0)) this.carry(chunk);
  }

  private carry(chunk: Buffer): void {
    const mode = this.proxy.mode;
    if (mode.kind !== "lossy" && this.pending === 0) {
      this.write(chunk);
      return;
    }
    const delay = mode.kind === "lossy" ? mode.latencyMs + this.proxy.random() * mode.jitterMs : 0;
    const carry = mode.kind === "lossy" ? (chunk.length / mode.bytesPerSecond) * 1_000 : 0;
    // In order (TCP): never before the chunk ahead of it, and no faster than the line carries.
    this.freeAt = Math.max(this.freeAt, Date.now() + delay) + carry;
    this.pending++;
    setTimeout(
      () => {
        this.pending--;
        this.write(chunk);
      },
      Math.max(0, this.freeAt - Date.now()),
    );
  }

  private write(chunk: Buffer): void {
    if (this.to && !this.to.destroyed && !this.to.writableEnded) this.to.write(chunk);
  }
}

type Pair = { client: net.Socket; upstream: net.Socket | null; up: Pipe; down: Pipe | null; closed: boolean };

/**
 * A TCP proxy between the daemon and Mosquitto that can stall, slow down or reset the link on demand
 * (docs: faults). Every random choice comes from the seeded PRNG.
 */
export class FaultProxy {
  mode: LinkMode = { kind: "pass" };
  readonly random: () => number;
  /** Connections the proxy has reset on purpose (lossy mode). */
  resets = 0;
  /** Connections accepted from the daemon. */
  accepted = 0;
  private readonly pairs = new Set<Pair>();
  private readonly server: net.Server;
  private resetTimer: NodeJS.Timeout | null = null;

  constructor(
    private readonly target: { host: string; port: number },
    seed = 1,
  ) {
    this.random = seededRandom(seed);
    this.server = net.createServer((client) => this.accept(client));
  }

  /** Listens on 127.0.0.1 and returns the broker URL to give the daemon. */
  async start(): Promise<string> {
    this.server.listen(0, "127.0.0.1");
    await once(this.server, "listening");
    return `mqtt://127.0.0.1:${(this.server.address() as net.AddressInfo).port}`;
  }

  /** The proxy in front of a broker URL (mqtt://host:port). */
  static async before(brokerUrl: string, seed = 1): Promise<{ proxy: FaultProxy; url: string }> {
    const u = new URL(brokerUrl);
    const proxy = new FaultProxy({ host: u.hostname, port: Number(u.port || 1883) }, seed);
    return { proxy, url: await proxy.start() };
  }

  blackhole(): void {
    this.set({ kind: "blackhole" });
  }

  lossy(m: Omit<Extract<LinkMode, { kind: "lossy" }>, "kind">): void {
    this.set({ kind: "lossy", ...m });
  }

  /** Back to a clean link: held connections move again (and connect upstream if they never did). */
  heal(): void {
    this.set({ kind: "pass" });
  }

  private set(mode: LinkMode): void {
    this.mode = mode;
    if (this.resetTimer) clearTimeout(this.resetTimer);
    this.resetTimer = null;
    for (const p of this.pairs) this.settle(p);
    if (mode.kind === "lossy") this.scheduleReset(mode.resetEveryMs);
  }

  /** Resets one live connection at a random time around `everyMs` from now, again and again. */
  private scheduleReset(everyMs: number): void {
    this.resetTimer = setTimeout(
      () => {
        const live = [...this.pairs].filter((p) => p.upstream);
        const victim = live[Math.floor(this.random() * live.length)];
        if (victim) {
          this.resets++;
          victim.client.resetAndDestroy();
          victim.upstream?.resetAndDestroy();
        }
        this.scheduleReset(everyMs);
      },
      everyMs * (0.5 + this.random()),
    );
  }

  private accept(client: net.Socket): void {
    this.accepted++;
    client.setNoDelay(true);
    const pair: Pair = { client, upstream: null, up: new Pipe(client, this), down: null, closed: false };
    this.pairs.add(pair);
    client.on("error", () => this.close(pair, "client"));
    client.on("close", () => this.close(pair, "client"));
    this.settle(pair);
  }

  /** Brings a connection in line with the mode: connected upstream and moving, or held. */
  private settle(pair: Pair): void {
    if (pair.closed || this.mode.kind === "blackhole") return;
    // A side that went away while the link was stalled: the other is told now.
    if (pair.client.destroyed) this.close(pair, "client");
    else if (pair.upstream?.destroyed) this.close(pair, "upstream");
    else {
      if (!pair.upstream) this.connect(pair);
      pair.up.release();
      pair.down?.release();
    }
  }

  private connect(pair: Pair): void {
    const upstream = net.createConnection(this.target);
    upstream.setNoDelay(true);
    pair.upstream = upstream;
    pair.up.to = upstream;
    pair.down = new Pipe(upstream, this);
    pair.down.to = pair.client;
    upstream.on("error", () => this.close(pair, "upstream"));
    upstream.on("close", () => this.close(pair, "upstream"));
  }

  /**
   * One side went away: the other is told — unless the link is stalled, when nothing reaches it until the
   * link heals (or its own keepalive gives up), as on a real stalled link.
   */
  private close(pair: Pair, side: "client" | "upstream"): void {
    if (pair.closed || this.mode.kind === "blackhole") return;
    pair.closed = true;
    this.pairs.delete(pair);
    // What the departed side sent before it went still arrives (a FIN follows the data).
    if (side === "client") pair.up.release();
    else pair.down?.release();
    pair.client.end();
    pair.upstream?.end();
    setTimeout(() => {
      pair.client.destroy();
      pair.upstream?.destroy();
    }, 1_000).unref();
  }

  async stop(): Promise<void> {
    if (this.resetTimer) clearTimeout(this.resetTimer);
    for (const p of this.pairs) {
      p.client.destroy();
      p.upstream?.destroy();
    }
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
