/**
 * Byte links between the gateway (host) and simulated devices. One device code, several cables (STYLE
 * principle 5): an in-memory Duplex pair for tests; for manual runs a socat pseudo-terminal pair, where the
 * gateway opens the host path with serialport exactly as it would a USB adapter, or a TCP port, which the
 * gateway opens as `tcp://host:port` like a serial device server.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, rmSync } from "node:fs";
import net from "node:net";
import { join, resolve } from "node:path";
import { Duplex } from "node:stream";
import type { SerialPortStream } from "@serialport/stream";
import { openSerialPort } from "../shared/node/serial-port.ts";

/** A simulated device (a bus of boards, a reader) that talks over whatever link it is given. */
export interface LinkEndpoint {
  attach(link: Duplex): void;
  detach(): void;
}

/** How a device's cable reaches the host: plugging hands the device a fresh link, unplugging pulls it. */
export interface Connector {
  connect(device: LinkEndpoint): Promise<void>;
  disconnect(): Promise<void>;
}

/**
 * One end of an in-memory cable. Delivery to the peer is deferred with setImmediate: a real serial line
 * never answers inside the write call, and a synchronous echo would let host code see a reply before it
 * has recorded that it sent the request.
 */
class WireEnd extends Duplex {
  peer: WireEnd | null = null;

  override _read(): void {}

  override _write(chunk: Buffer, _enc: BufferEncoding, cb: (err?: Error | null) => void): void {
    const copy = Buffer.from(chunk);
    setImmediate(() => {
      const p = this.peer;
      if (p && !p.destroyed && !p.readableEnded) p.push(copy);
    });
    cb();
  }

  override _final(cb: (err?: Error | null) => void): void {
    setImmediate(() => this.peer?.push(null));
    cb();
  }

  override _destroy(err: Error | null, cb: (err: Error | null) => void): void {
    // Either end closing pulls the whole cable, like a serial device disappearing.
    const p = this.peer;
    this.peer = null;
    if (p && !p.destroyed) p.destroy();
    cb(err);
  }
}

export type LinkPair = { host: Duplex; device: Duplex; unplug(): void };

/** Two cross-wired Duplex streams: bytes written to one are read from the other. */
export function createLinkPair(): LinkPair {
  const host = new WireEnd();
  const device = new WireEnd();
  host.peer = device;
  device.peer = host;
  return {
    host,
    device,
    unplug() {
      host.destroy();
      device.destroy();
    },
  };
}

/** Writes if the link can still take bytes; a device whose cable was pulled just talks into the void. */
export function writeTo(link: Duplex | null, bytes: Uint8Array | string): void {
  if (link?.writable && !link.destroyed) link.write(typeof bytes === "string" ? bytes : Buffer.from(bytes));
}

export type PtyPair = { hostPath: string; simPath: string; close(): Promise<void> };

/** Running socat processes: killed when this process exits, however it exits, so none outlives it. */
const liveSocats = new Set<ChildProcess>();
let reapOnExit = false;

/**
 * A socat pseudo-terminal pair: `<dir>/<name>` for the gateway, `<dir>/<name>.sim` for the simulator.
 * Killing socat is what a pulled USB cable looks like to the gateway: its open port reports a disconnect.
 */
export async function openPtyPair(dir: string, name: string, timeoutMs = 5_000): Promise<PtyPair> {
  const hostPath = resolve(join(dir, name));
  const simPath = `${hostPath}.sim`;
  // A stale link from a crashed run would make the wait below succeed before socat is ready.
  for (const p of [hostPath, simPath]) rmSync(p, { force: true });
  const child = spawn(
    "socat",
    ["-d", "-d", `pty,raw,echo=0,link=${hostPath}`, `pty,raw,echo=0,link=${simPath}`],
    { stdio: ["ignore", "ignore", "pipe"] },
  );
  liveSocats.add(child);
  if (!reapOnExit) {
    reapOnExit = true;
    process.once("exit", () => {
      for (const c of liveSocats) c.kill("SIGTERM"); // socat removes its links on SIGTERM
    });
  }
  let stderr = "";
  child.stderr?.on("data", (d: Buffer) => {
    stderr = (stderr + d.toString()).slice(-2_000);
  });
  const exited = new Promise<void>((res) =>
    child.once("exit", () => {
      liveSocats.delete(child);
      res();
    }),
  );
  const deadline = Date.now() + timeoutMs;
  while (!(existsSync(hostPath) && existsSync(simPath))) {
    if (child.exitCode !== null || child.signalCode !== null || Date.now() > deadline) {
      await killAndWait(child, exited);
      throw new Error(`socat did not create ${hostPath}: ${stderr.trim() || "timed out"}`);
    }
    await new Promise((r) => setTimeout(r, 10));
  }
  return { hostPath, simPath, close: () => killAndWait(child, exited) };
}

async function killAndWait(child: ChildProcess, exited: Promise<void>): Promise<void> {
  if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
  await exited;
}

/**
 * Opens the simulator's side of a pty (or any serial device) with serialport, with the read that ends on
 * a hangup (shared/node/serial-port.ts): stock serialport spins on a pty whose socat died under it.
 */
export function openSerialDevice(path: string, baudRate: number): Promise<SerialPortStream> {
  return openSerialPort(path, baudRate);
}

/** Closes a serial port for good and releases its device; resolves once it is closed. */
function closeSerialDevice(port: SerialPortStream): Promise<void> {
  return new Promise<void>((res) => {
    // destroy() alone would leave the device open (and its read running); close() releases it.
    if (port.isOpen) {
      port.close(() => {
        port.destroy();
        res();
      });
      return;
    }
    if (!port.destroyed) port.destroy();
    res();
  });
}

/**
 * In-memory connector: the cable exists once the gateway opens `sim://<name>` (see `open`), as a serial
 * port only carries bytes while someone holds it open. While unplugged, opening fails like a missing
 * device node; while the gateway holds it, a second open fails like a locked port.
 */
export class MemoryConnector implements Connector {
  private device: LinkEndpoint | null = null;
  private pair: LinkPair | null = null;

  constructor(readonly path: string) {}

  connect(device: LinkEndpoint): Promise<void> {
    this.device = device;
    return Promise.resolve();
  }

  disconnect(): Promise<void> {
    this.device?.detach();
    this.device = null;
    this.pair?.unplug();
    this.pair = null;
    return Promise.resolve();
  }

  get isPlugged(): boolean {
    return this.device !== null;
  }

  /** The host end of a fresh cable to the device; what a SerialLinkFactory returns for this path. */
  open(): Promise<Duplex> {
    const device = this.device;
    if (!device) return Promise.reject(new Error(`ENOENT: no such device, cannot open ${this.path}`));
    if (this.pair && !this.pair.host.destroyed) {
      return Promise.reject(new Error(`EBUSY: ${this.path} is already open`));
    }
    const pair = createLinkPair();
    this.pair = pair;
    pair.device.once("close", () => {
      if (this.pair === pair) device.detach();
    });
    device.attach(pair.device);
    return Promise.resolve(pair.host);
  }
}

/**
 * Pty connector: plugging opens a socat pair at `<dir>/<name>` and attaches the device to its sim side.
 * The gateway may open and close the host side as often as it likes; if socat goes away on its own, the
 * device's side closes and the device is detached, as if its cable had been pulled.
 */
export class PtyConnector implements Connector {
  private pty: PtyPair | null = null;
  private port: SerialPortStream | null = null;
  private device: LinkEndpoint | null = null;

  constructor(
    readonly dir: string,
    readonly name: string,
    readonly baudRate: number,
  ) {}

  get hostPath(): string {
    return resolve(join(this.dir, this.name));
  }

  async connect(device: LinkEndpoint): Promise<void> {
    await this.disconnect();
    const pty = await openPtyPair(this.dir, this.name);
    this.pty = pty;
    let port: SerialPortStream;
    try {
      port = await openSerialDevice(pty.simPath, this.baudRate);
    } catch (err) {
      // No device on it: the pair would only hold a pty and a process for nothing.
      await pty.close();
      this.pty = null;
      throw err;
    }
    port.on("error", () => {});
    port.once("close", () => {
      if (this.port !== port) return;
      this.port = null;
      this.device?.detach();
      this.device = null;
    });
    this.port = port;
    this.device = device;
    device.attach(port);
  }

  async disconnect(): Promise<void> {
    this.device?.detach();
    this.device = null;
    const port = this.port;
    this.port = null;
    // The device's side is closed (its fd released, its read ended) before socat goes.
    if (port) await closeSerialDevice(port);
    await this.pty?.close();
    this.pty = null;
  }
}

/**
 * TCP connector: plugging listens on `host:port` (port 0: a free one, kept for later plugs), and the host's
 * `tcp://host:port` connection is the device's cable. One host at a time: a new connection takes the cable
 * from the previous one, which is closed (a host that reconnects after a network drop is never locked out
 * by its own dead connection). Unplugging closes the listener and the open connection, so the host's link
 * closes and a new connection is refused until the cable is back.
 */
export class TcpConnector implements Connector {
  private server: net.Server | null = null;
  private socket: net.Socket | null = null;
  private device: LinkEndpoint | null = null;

  constructor(
    readonly host = "127.0.0.1",
    private port = 0,
  ) {}

  /** What the gateway opens (valid once plugged in). */
  get url(): string {
    return `tcp://${this.host}:${this.port}`;
  }

  async connect(device: LinkEndpoint): Promise<void> {
    await this.disconnect();
    this.device = device;
    const server = net.createServer((socket) => {
      socket.on("error", () => {});
      socket.setNoDelay(true);
      const previous = this.socket;
      this.socket = socket;
      previous?.destroy();
      socket.once("close", () => {
        if (this.socket !== socket) return;
        this.socket = null;
        this.device?.detach();
      });
      device.attach(socket);
    });
    await new Promise<void>((res, rej) => {
      server.once("error", rej);
      server.listen(this.port, this.host, () => {
        server.off("error", rej);
        res();
      });
    });
    this.port = (server.address() as net.AddressInfo).port;
    this.server = server;
  }

  async disconnect(): Promise<void> {
    this.device?.detach();
    this.device = null;
    this.socket?.destroy();
    this.socket = null;
    const server = this.server;
    this.server = null;
    if (server) await new Promise<void>((res) => server.close(() => res()));
  }
}
