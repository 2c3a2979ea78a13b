import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Duplex } from "node:stream";
import type { SerialPortStream } from "@serialport/stream";
import { describe, expect, it } from "vitest";
import { createSerialLinkFactory } from "../../gateway/adapters/serial/serial-links.ts";
import { ReopeningLink } from "../../gateway/serial/reopening-link.ts";
import {
  type LinkEndpoint,
  openPtyPair,
  openSerialDevice,
  type PtyPair,
  TcpConnector,
} from "../../hardware-sim/links.ts";
import { cpuWhileIdle } from "../support/cpu-window.ts";
import { FakeClock } from "../support/fake-clock.ts";
import { Signal } from "../support/signal.ts";

const BAUD = 115_200;

/** Writes to `link` without pause, each write once the last is done, until it closes. */
function stream(link: Duplex): void {
  const chunk = Buffer.alloc(64, 0x55);
  const next = () => {
    if (link.writable && !link.destroyed) link.write(chunk, (err) => (err ? undefined : setImmediate(next)));
  };
  next();
}

/** The far end of the gateway's serial line: it appears streaming bytes, and vanishes while they flow. */
type FarEnd = {
  readonly path: string;
  up(): Promise<void>;
  vanish(): Promise<void>;
  close(): Promise<void>;
};

/** A pseudo-terminal whose socat dies under both sides (a pulled USB adapter, as the kernel shows it). */
function ptyFarEnd(): FarEnd {
  const dir = mkdtempSync(path.join(tmpdir(), "serial-gone-"));
  let pty: PtyPair | null = null;
  let port: SerialPortStream | null = null;
  return {
    path: path.join(dir, "bus0"),
    async up() {
      pty = await openPtyPair(dir, "bus0");
      port = await openSerialDevice(pty.simPath, BAUD);
      port.on("error", () => {});
      stream(port);
    },
    async vanish() {
      const p = port;
      const simClosed = new Promise<void>((r) => p?.once("close", () => r()));
      await pty?.close();
      // The simulator's side notices too (its read ended by the hangup), so nothing is left reading.
      await simClosed;
      port = null;
      pty = null;
    },
    async close() {
      if (port?.isOpen) await new Promise((r) => port?.close(r));
      await pty?.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A serial device server that goes away: its connection closes and new ones are refused. */
function tcpFarEnd(): FarEnd {
  const connector = new TcpConnector();
  const device: LinkEndpoint = {
    attach(link) {
      link.on("error", () => {});
      stream(link);
    },
    detach() {},
  };
  return {
    get path() {
      return connector.url;
    },
    up: () => connector.connect(device),
    vanish: () => connector.disconnect(),
    close: () => connector.disconnect(),
  };
}

const farEnds: [string, () => FarEnd][] = [
  ["a pseudo-terminal whose socat dies", ptyFarEnd],
  ["tcp:// whose peer goes away", tcpFarEnd],
];

for (const [name, makeFarEnd] of farEnds) {
  describe(`the gateway's serial line over ${name}`, () => {
    it("closes, tries again a few times a minute without spinning, and opens again once the peer is back", async () => {
      const far = makeFarEnd();
      await far.up();
      const clock = new FakeClock();
      const line = new ReopeningLink({
        path: far.path,
        baudRate: BAUD,
        openLink: createSerialLinkFactory(),
        clock,
        minReopenMs: 500,
        maxReopenMs: 10_000,
      });
      const seen = { open: 0, closed: 0, failed: 0, bytes: 0, waits: [] as number[] };
      const changed = new Signal();
      const count = (what: "open" | "closed" | "failed") => () => {
        seen[what]++;
        changed.notify();
      };
      line.on("open", (link) => {
        link.on("data", (chunk: Buffer) => {
          seen.bytes += chunk.length;
          changed.notify();
        });
        count("open")();
      });
      line.on("closed", count("closed"));
      line.on("openFailed", count("failed"));
      line.on("waiting", (ms) => {
        seen.waits.push(ms);
        changed.notify();
      });
      try {
        await line.start();
        expect(line.isOpen).toBe(true);
        // Bytes flow, so the gateway's reads are in flight when the far end goes.
        await changed.until(() => seen.bytes > 4_096);
        await far.vanish();
        await changed.until(() => seen.closed === 1 && seen.waits.length === 1);

        // A minute without the peer, on the fake clock: each attempt is let run as soon as it is due.
        let elapsed = 0;
        while (elapsed < 60_000) {
          const scheduled = seen.waits.length;
          const wait = seen.waits[scheduled - 1] as number;
          clock.advance(wait);
          elapsed += wait;
          await changed.until(() => seen.waits.length > scheduled);
        }
        // 500 ms doubling to a 10 s cap: ten attempts in that minute, each failing without a retry at once.
        expect(seen.failed).toBeGreaterThanOrEqual(5);
        expect(seen.failed).toBeLessThanOrEqual(12);
        expect(Math.max(...seen.waits)).toBe(10_000);
        expect(seen.open).toBe(1);
        expect(line.isOpen).toBe(false);
        expect(await cpuWhileIdle()).toBeLessThan(100);

        await far.up();
        const before = seen.bytes;
        clock.advance(seen.waits.at(-1) as number);
        await changed.until(() => seen.open === 2 && seen.bytes > before);
        expect(line.isOpen).toBe(true);
      } finally {
        await line.stop();
        await far.close();
      }
    });
  });
}
