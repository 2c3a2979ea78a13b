import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import {
  createSdNotify,
  SYSTEMD_NOTIFY,
  watchdogIntervalMs,
} from "../../gateway/adapters/systemd/sd-notify.ts";
import { createWatchdog } from "../../gateway/health/watchdog.ts";
import { eventually } from "../support/eventually.ts";
import { FakeClock } from "../support/fake-clock.ts";

/**
 * A fake NOTIFY_SOCKET: a unix datagram socket that prints each datagram as one JSON string per line and,
 * like systemd, closes the fd that systemd-notify's BARRIER=1 passes (so its barrier returns at once).
 * Python, because Node has no unix datagram sockets and socat merges datagrams and keeps the fds.
 */
const RECEIVER = `
import array, json, os, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
print("ready", flush=True)
while True:
    data, anc, _flags, _addr = s.recvmsg(65536, socket.CMSG_SPACE(64 * 4))
    for level, kind, payload in anc:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds = array.array("i")
            fds.frombytes(payload[: len(payload) - len(payload) % fds.itemsize])
            for fd in fds:
                os.close(fd)
    print(json.dumps(data.decode()), flush=True)
`;

type FakeNotifySocket = { path: string; messages: string[]; stop(): void };

async function startFakeNotifySocket(path: string): Promise<FakeNotifySocket> {
  const child: ChildProcess = spawn("python3", ["-c", RECEIVER, path], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  const messages: string[] = [];
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  await new Promise<void>((resolve, reject) => {
    child.once("error", reject);
    child.once("exit", (code) => reject(new Error(`fake NOTIFY_SOCKET exited with ${code}`)));
    lines.on("line", (line) => {
      if (line === "ready") resolve();
      else messages.push(JSON.parse(line) as string);
    });
  });
  return { path, messages, stop: () => child.kill() };
}

let dir: string;
let fake: FakeNotifySocket;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "sd-notify-"));
  fake = await startFakeNotifySocket(join(dir, "notify.sock"));
});

afterEach(async () => {
  fake.stop();
  await rm(dir, { recursive: true, force: true });
});

describe("sd-notify through systemd-notify", () => {
  it("uses the systemd-notify binary that ships with systemd", () => {
    expect(SYSTEMD_NOTIFY).toBe("/usr/bin/systemd-notify");
  });

  it("delivers READY=1 with STATUS, WATCHDOG=1, STATUS and STOPPING=1 as separate datagrams in call order", async () => {
    const sd = createSdNotify({ env: { NOTIFY_SOCKET: fake.path } });
    expect(sd.enabled).toBe(true);
    // Not awaited one by one: the adapter must keep call order on its own.
    const sent = await Promise.all([
      sd.ready("serving 2 buses"),
      sd.watchdog(),
      sd.status("broker down\nretrying"),
      sd.stopping(),
    ]);
    expect(sent).toEqual([true, true, true, true]);
    // Each message is followed by systemd-notify's BARRIER=1 (it waits until the manager took the message).
    await eventually(() =>
      expect(fake.messages).toEqual([
        "READY=1\nSTATUS=serving 2 buses",
        "BARRIER=1",
        "WATCHDOG=1",
        "BARRIER=1",
        "STATUS=broker down retrying",
        "BARRIER=1",
        "STOPPING=1",
        "BARRIER=1",
      ]),
    );
  });

  it("is a no-op when NOTIFY_SOCKET is unset: nothing spawned, nothing sent", async () => {
    const warn = vi.fn();
    const sd = createSdNotify({ env: {}, binary: join(dir, "no-such-binary"), log: { warn } });
    expect(sd.enabled).toBe(false);
    expect(await sd.ready("x")).toBe(false);
    expect(await sd.watchdog()).toBe(false);
    expect(warn).not.toHaveBeenCalled();
    expect(fake.messages).toEqual([]);
  });

  it("resolves false and logs, without throwing, when nothing listens on NOTIFY_SOCKET", async () => {
    const warn = vi.fn();
    const sd = createSdNotify({ env: { NOTIFY_SOCKET: join(dir, "absent.sock") }, log: { warn } });
    expect(await sd.watchdog()).toBe(false);
    expect(warn).toHaveBeenCalledWith(
      expect.objectContaining({ assignments: ["WATCHDOG=1"] }),
      "sd_notify failed",
    );
  });

  it("drives a health-gated watchdog: WATCHDOG=1 reaches the socket only while healthy", async () => {
    const sd = createSdNotify({ env: { NOTIFY_SOCKET: fake.path } });
    const clock = new FakeClock();
    let healthy = true;
    let sends = 0;
    let lastSend: Promise<boolean> = Promise.resolve(true);
    const dog = createWatchdog({
      notify: (m) => {
        sends++;
        lastSend = sd.notify(m);
        return lastSend;
      },
      intervalMs: 40,
      isHealthy: () => healthy,
      clock,
    });
    /** One watchdog period on the fake clock, and the health check it starts. */
    const period = async () => {
      clock.advance(40);
      await new Promise((r) => setImmediate(r));
    };
    dog.start();
    try {
      await period();
      await period();
      expect(sends).toBe(2);
      expect(await lastSend).toBe(true);
      await eventually(() =>
        expect(fake.messages).toEqual(["WATCHDOG=1", "BARRIER=1", "WATCHDOG=1", "BARRIER=1"]),
      );

      healthy = false;
      for (let i = 0; i < 10; i++) await period();
      expect(sends).toBe(2); // ten periods unhealthy: not a single ping
      expect(fake.messages).toHaveLength(4);

      healthy = true;
      await period();
      expect(sends).toBe(3);
      await eventually(() => expect(fake.messages).toHaveLength(6));
      expect(fake.messages.slice(4)).toEqual(["WATCHDOG=1", "BARRIER=1"]);
    } finally {
      dog.stop();
    }
  });
});

describe("watchdogIntervalMs", () => {
  it("pings at half of WatchdogSec, from WATCHDOG_USEC", () => {
    expect(watchdogIntervalMs({ WATCHDOG_USEC: "30000000" }, 42)).toBe(15_000);
    expect(watchdogIntervalMs({ WATCHDOG_USEC: "30000000", WATCHDOG_PID: "42" }, 42)).toBe(15_000);
  });

  it("is null when the watchdog is off or meant for another process", () => {
    expect(watchdogIntervalMs({}, 42)).toBeNull();
    expect(watchdogIntervalMs({ WATCHDOG_USEC: "0" }, 42)).toBeNull();
    expect(watchdogIntervalMs({ WATCHDOG_USEC: "30000000", WATCHDOG_PID: "7" }, 42)).toBeNull();
  });
});
