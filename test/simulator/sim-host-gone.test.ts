import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Duplex } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import { createSerialLinkFactory } from "../../gateway/adapters/serial/serial-links.ts";
import type { SerialLink } from "../../gateway/ports.ts";
import { closeLink } from "../../gateway/serial/close-link.ts";
import {
  type Connector,
  type LinkEndpoint,
  openPtyPair,
  openSerialDevice,
  PtyConnector,
  TcpConnector,
  writeTo,
} from "../../hardware-sim/links.ts";
import { cpuWhileIdle } from "../support/cpu-window.ts";
import { Signal } from "../support/signal.ts";

const BAUD = 115_200;
const openLink = createSerialLinkFactory();

/** Writes to `link` without pause, each write once the last is done, until it closes. */
function stream(link: Duplex): void {
  const chunk = Buffer.alloc(64, 0x55);
  const next = () => {
    if (link.writable && !link.destroyed) link.write(chunk, (err) => (err ? undefined : setImmediate(next)));
  };
  next();
}

/** Bytes that arrived on a stream, and a way to wait for more. */
function counted(link: Duplex) {
  const got = { bytes: 0, text: "" };
  const more = new Signal();
  link.on("data", (chunk: Buffer) => {
    got.bytes += chunk.length;
    got.text = (got.text + chunk.toString("latin1")).slice(-64);
    more.notify();
  });
  return { got, until: (done: () => boolean) => more.until(done) };
}

/** A simulated device that answers every byte with itself, like a board that always replies. */
class EchoDevice implements LinkEndpoint {
  attached = 0;
  detached = 0;
  private readonly changed = new Signal();

  attach(link: Duplex): void {
    this.attached++;
    link.on("error", () => {});
    link.on("data", (chunk: Buffer) => writeTo(link, chunk));
    this.changed.notify();
  }

  detach(): void {
    this.detached++;
    this.changed.notify();
  }

  until(done: () => boolean): Promise<void> {
    return this.changed.until(done);
  }
}

describe("the simulator's side of a pseudo-terminal", () => {
  // What left `npm run bench:commands` spinning after its figures: socat went while the simulator's port
  // was reading, the read got 0 bytes from the hung-up tty and stock serialport read again at once, forever.
  it("closes when socat dies while bytes flow into it, and leaves the CPU idle", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "sim-pty-gone-"));
    try {
      for (let round = 0; round < 3; round++) {
        const pty = await openPtyPair(dir, "bus0");
        const sim = await openSerialDevice(pty.simPath, BAUD);
        sim.on("error", () => {});
        const simGot = counted(sim);
        const simClosed = new Promise<void>((r) => sim.once("close", () => r()));
        const host = await openLink(pty.hostPath, BAUD);
        host.on("error", () => {});
        const hostClosed = new Promise<void>((r) => host.once("close", () => r()));
        stream(host);
        await simGot.until(() => simGot.got.bytes > 4_096);

        await pty.close();
        await hostClosed;
        expect(await cpuWhileIdle()).toBeLessThan(100);
        await simClosed;
        expect(sim.isOpen).toBe(false);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

type Rig = { connector: Connector; hostPath(): string; close(): Promise<void> };

const rigs: [string, () => Rig, { reattaches: boolean }][] = [
  [
    "a pseudo-terminal (PtyConnector)",
    () => {
      const dir = mkdtempSync(path.join(tmpdir(), "sim-host-gone-"));
      const connector = new PtyConnector(dir, "bus0", BAUD);
      return {
        connector,
        hostPath: () => connector.hostPath,
        close: async () => rmSync(dir, { recursive: true, force: true }),
      };
    },
    // The device keeps its side of the pty while gateways come and go.
    { reattaches: false },
  ],
  [
    "tcp:// (TcpConnector)",
    () => {
      const connector = new TcpConnector();
      return { connector, hostPath: () => connector.url, close: async () => {} };
    },
    // Each connection is a fresh cable: the device is detached when it closes, attached on the next.
    { reattaches: true },
  ],
];

for (const [name, makeRig, { reattaches }] of rigs) {
  describe(`the simulator when its gateway goes away: ${name}`, () => {
    let rig: Rig | null = null;

    afterEach(async () => {
      await rig?.connector.disconnect();
      await rig?.close();
      rig = null;
    });

    it("stays idle while no gateway is there, and answers the next one", async () => {
      rig = makeRig();
      const device = new EchoDevice();
      await rig.connector.connect(device);
      const links: SerialLink[] = [];
      try {
        for (let round = 1; round <= 3; round++) {
          const host = await openLink(rig.hostPath(), BAUD);
          links.push(host);
          host.on("error", () => {});
          const echoed = counted(host);
          host.write(`ping ${round}`);
          await echoed.until(() => echoed.got.text.includes(`ping ${round}`));
          // The gateway goes while bytes flow both ways (the device echoes everything).
          stream(host);
          await echoed.until(() => echoed.got.bytes > 4_096);
          await closeLink(host);
          if (reattaches) await device.until(() => device.detached === round);
          expect(await cpuWhileIdle()).toBeLessThan(100);
        }
        expect(device.attached).toBe(reattaches ? 3 : 1);
      } finally {
        for (const l of links) await closeLink(l);
      }
    });
  });
}
