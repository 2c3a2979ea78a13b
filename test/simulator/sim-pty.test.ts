import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { SerialPortStream } from "@serialport/stream";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { LockBus } from "../../hardware-sim/bus.ts";
import { HostProbe } from "../../hardware-sim/host-probe.ts";
import { openPtyPair, openSerialDevice, PtyConnector } from "../../hardware-sim/links.ts";
import { LockBoard } from "../../hardware-sim/lock-controller.ts";
import { SimReader } from "../../hardware-sim/rfid-reader.ts";
import { openSerialPort } from "../../shared/node/serial-port.ts";
import { eventually } from "../support/eventually.ts";

let dir = "";
const cleanups: (() => Promise<void> | void)[] = [];

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "sim-pty-"));
});

afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
  rmSync(dir, { recursive: true, force: true });
});

/** Opens a path the way the gateway does (serialport), closing it after the test. */
/**
 * The host's end, opened as the gateway opens its lines: stock serialport's read spins on a hung-up pty
 * and may never report the close, which on a busy machine left this test waiting for ever.
 */
async function openHost(path: string, baudRate: number): Promise<SerialPortStream> {
  const port = await openSerialPort(path, baudRate);
  port.on("error", () => {});
  cleanups.push(() => closePort(port));
  return port;
}

function closePort(port: SerialPortStream): Promise<void> {
  return port.isOpen ? new Promise((res) => port.close(() => res())) : Promise.resolve();
}

/** Collects the text a reader prints. */
function text(port: SerialPortStream): { value: string } {
  const t = { value: "" };
  port.on("data", (d: Buffer) => {
    t.value += d.toString("latin1");
  });
  return t;
}

describe("pseudo-terminal links", () => {
  it("carry lock-bus frames both ways between serialport and the simulated bus", async () => {
    const pty = await openPtyPair(dir, "bus0");
    cleanups.push(() => pty.close());
    expect(pty.hostPath).toBe(join(dir, "bus0"));
    const simSide = await openSerialDevice(pty.simPath, 115_200);
    const bus = new LockBus("bus0", [
      new LockBoard({ address: 1, moveMs: 0 }),
      new LockBoard({ address: 2, moveMs: 0 }),
    ]);
    bus.attach(simSide);
    cleanups.unshift(() => {
      simSide.destroy();
    });

    const host = new HostProbe(await openHost(pty.hostPath, 115_200));
    const { ack, reply } = await host.request(
      { kind: "unlock", addr: 2, seq: 77, channel: 3, holdS: 0 },
      3_000,
    );
    expect(ack).toEqual({ kind: "ack", addr: 2, seq: 77 });
    expect(reply).toMatchObject({ kind: "unlock_result", seq: 77, result: "ok", latch: "unlocked" });
    bus.board(2).openDoor(3);
    expect(await host.next((m) => m.kind === "event", 3_000)).toEqual({
      kind: "event",
      addr: 2,
      channel: 3,
      event: "door_opened",
    });
    expect(bus.board(1).received).toEqual([]);
  });

  it("let a reader be unplugged (the host's port closes) and plugged back at the same path", async () => {
    const reader = new SimReader("reader-1", { aliveMs: false });
    const connector = new PtyConnector(dir, "reader-1", 9600);
    await reader.plugInto(connector);
    cleanups.push(() => reader.close());

    const first = await openHost(connector.hostPath, 9600);
    const seen = text(first);
    reader.tap("0a:0b:0c:0d");
    await eventually(() => expect(seen.value).toContain("TAG 0A:0B:0C:0D\r\n"), 3_000);

    const closed = new Promise<void>((res) => first.once("close", () => res()));
    await reader.unplug();
    await closed;
    expect(existsSync(connector.hostPath)).toBe(false);

    await reader.plugIn();
    const second = await openHost(connector.hostPath, 9600);
    const again = text(second);
    reader.tap("ff01");
    await eventually(() => expect(again.value).toContain("TAG FF01\r\n"), 3_000);
  });
});

describe("standalone simulator (npm run sim)", () => {
  let child: ChildProcess | null = null;

  afterEach(() => {
    // The child leads its own process group, so this reaches its socat children too.
    if (child?.pid && child.exitCode === null && child.signalCode === null)
      process.kill(-child.pid, "SIGKILL");
    child = null;
  });

  it("prints its pty paths, answers a PING and a tap over them, and exits cleanly on SIGTERM", async () => {
    const proc = spawn(process.execPath, ["--import", "tsx", "hardware-sim/main.ts", "--dir", dir], {
      cwd: join(import.meta.dirname, "../.."),
      stdio: ["pipe", "pipe", "pipe"],
      detached: true,
    });
    child = proc;
    let out = "";
    let err = "";
    proc.stdout?.on("data", (d: Buffer) => {
      out += d.toString();
    });
    proc.stderr?.on("data", (d: Buffer) => {
      err += d.toString();
    });
    const exited = new Promise<number | null>((res) => proc.once("exit", (code) => res(code)));

    await eventually(() => expect(out, err).toContain("ready"), 15_000, 50);
    const busPath = /bus bus0 at (\S+)/.exec(out)?.[1];
    const readerPath = /reader reader-1 at (\S+)/.exec(out)?.[1];
    expect(busPath).toBe(join(dir, "bus0"));
    expect(readerPath).toBe(join(dir, "reader-1"));

    const bus = await openHost(busPath as string, 115_200);
    const host = new HostProbe(bus);
    expect((await host.request({ kind: "ping", addr: 1, seq: 5 }, 3_000)).reply).toEqual({
      kind: "ping_reply",
      addr: 1,
      seq: 5,
      firmware: "1.0",
      channels: 8,
    });

    const reader = text(await openHost(readerPath as string, 9600));
    proc.stdin?.write("tap reader-1 04A1B2\n");
    await eventually(() => expect(reader.value).toContain("TAG 04A1B2\r\n"), 3_000);

    for (const c of cleanups.splice(0)) await c();
    proc.kill("SIGTERM");
    expect(await exited).toBe(0);
    expect(existsSync(busPath as string)).toBe(false);
    expect(existsSync(readerPath as string)).toBe(false);
  });
});
