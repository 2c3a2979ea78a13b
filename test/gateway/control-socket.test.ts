import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { lstat, mkdtemp, rm, stat, writeFile } from "node:fs/promises";
import { createConnection, createServer, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ControlApi, DeviceView, GatewayStatus } from "../../gateway/control/control-api.ts";
import {
  ControlCallError,
  ControlUnreachableError,
  callControl,
} from "../../gateway/control/control-client.ts";
import {
  ControlError,
  type ControlServer,
  startControlServer,
} from "../../gateway/control/control-server.ts";

const log = pino({ level: process.env.TEST_LOG_LEVEL ?? "silent" });

const STATUS: GatewayStatus = {
  gateway_id: "gw-test",
  version: "0.1.0",
  uptime_s: 12,
  now: "2026-01-15T10:00:00.000Z",
  broker: { url: "mqtt://127.0.0.1:1883", connected: true, since: "2026-01-15T09:59:50.000Z" },
  buses: [],
  readers: [],
  outbox: { pending: 0, oldest_age_s: null },
  devices: 1,
  keys: { version: 0, grants: 0 },
};

const DEVICE: DeviceView = {
  device_id: "11111111-1111-4111-8111-111111111111",
  alias: "locker-1",
  type: "locker",
  bus: "locks",
  board: 1,
  channel: 1,
  reachable: true,
  latch: "locked",
  door_open: false,
  item_present: true,
  read_at: "2026-01-15T10:00:00.000Z",
  last_command: null,
};

const never = () => new Promise<never>(() => {});
/** A real daemon answers after some I/O; so does the fake. */
const someIo = () => new Promise((r) => setImmediate(r));

function fakeApi(over: Partial<ControlApi> = {}): ControlApi {
  return {
    status: async () => STATUS,
    devices: async () => [DEVICE],
    device: async (alias) => (alias === DEVICE.alias ? DEVICE : null),
    actuate: async () => ({ ok: true, result: "SUCCESS", latch: "unlocked", ms: 5 }),
    testCycle: async (alias) => ({ alias, steps: [] }),
    outbox: async () => ({ pending: 0, oldest_age_s: null, rows: [] }),
    keys: async (card) => ({ card_id: card, version: 0, grants: [] }),
    probeSerial: async () => [],
    doctor: async () => [],
    ...over,
  };
}

/** A raw client: writes `text` as is and collects answer lines until `count` arrived. */
function exchange(
  path: string,
  text: string,
  count: number,
  onAnswer: (answers: Record<string, unknown>[]) => void = () => {},
): Promise<Record<string, unknown>[]> {
  return new Promise((resolve, reject) => {
    const answers: Record<string, unknown>[] = [];
    let buf = "";
    const s: Socket = createConnection(path, () => s.write(text));
    s.setEncoding("utf8");
    s.on("data", (chunk: string) => {
      buf += chunk;
      const lines = buf.split("\n");
      buf = lines.pop() ?? "";
      for (const l of lines) answers.push(JSON.parse(l));
      if (lines.length) onAnswer(answers);
      if (answers.length >= count) {
        s.destroy();
        resolve(answers);
      }
    });
    s.on("error", reject);
  });
}

let dir: string;
let sock: string;
let server: ControlServer | null;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "control-socket-"));
  sock = join(dir, "control.sock");
  server = null;
});

afterEach(async () => {
  await server?.close();
  await rm(dir, { recursive: true, force: true });
});

describe("control socket server and client", () => {
  it("returns the api's result to callControl over a real unix socket", async () => {
    server = await startControlServer({ path: sock, api: fakeApi(), log });
    await expect(callControl(sock, "status", {}, { timeoutMs: 2000 })).resolves.toEqual(STATUS);
    await expect(callControl(sock, "device", { alias: "locker-1" })).resolves.toEqual(DEVICE);
    await expect(callControl(sock, "device", { alias: "nope" })).resolves.toBeNull();
  });

  it("passes every actuate param through to the api", async () => {
    const calls: unknown[][] = [];
    server = await startControlServer({
      path: sock,
      api: fakeApi({
        actuate: async (...args) => {
          await someIo();
          calls.push(args);
          return { ok: true, result: "SUCCESS", latch: "unlocked", ms: 3 };
        },
      }),
      log,
    });
    await callControl(sock, "actuate", {
      alias: "locker-1",
      action: "unlock",
      who: "ana",
      why: "stuck bike",
    });
    expect(calls).toEqual([["locker-1", "unlock", "ana", "stuck bike"]]);
  });

  it("answers pipelined requests on one connection each by its own id, the slow one last", async () => {
    // status answers only once the client holds the two other answers: each is sent as soon as it is ready.
    let release = () => {};
    const released = new Promise<void>((r) => (release = r));
    server = await startControlServer({
      path: sock,
      api: fakeApi({
        status: async () => {
          await released;
          return STATUS;
        },
      }),
      log,
    });
    const lines = [
      { id: 1, method: "status" },
      { id: "two", method: "devices" },
      { id: 3, method: "device", params: { alias: "locker-1" } },
    ]
      .map((r) => JSON.stringify(r))
      .join("\n");
    const answers = await exchange(sock, `${lines}\n`, 3, (so) => {
      if (so.length === 2) release();
    });
    expect(answers.map((a) => a.id)).toEqual(["two", 3, 1]);
    const byId = new Map(answers.map((a) => [a.id, a.result]));
    expect(byId.get(1)).toEqual(STATUS);
    expect(byId.get("two")).toEqual([DEVICE]);
    expect(byId.get(3)).toEqual(DEVICE);
  });

  it("answers an unknown method with error code unknown_method and its id", async () => {
    server = await startControlServer({ path: sock, api: fakeApi(), log });
    const [a] = await exchange(sock, `${JSON.stringify({ id: 7, method: "reboot" })}\n`, 1);
    expect(a).toEqual({ id: 7, error: { code: "unknown_method", message: "unknown method: reboot" } });
    const [proto] = await exchange(sock, `${JSON.stringify({ id: 8, method: "constructor" })}\n`, 1);
    expect(proto).toMatchObject({ id: 8, error: { code: "unknown_method" } });
  });

  it("answers a line that is not JSON with bad_request and still serves the next line", async () => {
    server = await startControlServer({ path: sock, api: fakeApi(), log });
    const answers = await exchange(sock, `{not json\n${JSON.stringify({ id: 2, method: "devices" })}\n`, 2);
    expect(answers[0]).toEqual({
      id: null,
      error: { code: "bad_request", message: "request is not valid JSON" },
    });
    expect(answers[1]).toEqual({ id: 2, result: [DEVICE] });
  });

  it("answers a request without a method, or with missing params, with bad_request", async () => {
    server = await startControlServer({ path: sock, api: fakeApi(), log });
    const answers = await exchange(
      sock,
      `${JSON.stringify({ id: 1 })}\n${JSON.stringify({ id: 2, method: "actuate", params: { alias: "x" } })}\n`,
      2,
    );
    const byId = new Map(answers.map((a) => [a.id, a.error as { code: string; message: string }]));
    expect(byId.get(1)?.code).toBe("bad_request");
    expect(byId.get(2)?.code).toBe("bad_request");
    expect(byId.get(2)?.message).toContain("params.action");
    expect(byId.get(2)?.message).toContain("params.who");
  });

  it("turns an api method's thrown error into an error answer with its message, keeping a ControlError's code", async () => {
    server = await startControlServer({
      path: sock,
      api: fakeApi({
        outbox: async () => {
          await someIo();
          throw new Error("database is locked");
        },
        testCycle: async (alias) => {
          await someIo();
          throw new ControlError("device_not_found", `no device ${alias}`);
        },
      }),
      log,
    });
    const failed = await callControl(sock, "outbox").catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(ControlCallError);
    expect(failed).toMatchObject({ code: "failed", message: "database is locked" });
    const notFound = await callControl(sock, "testCycle", { alias: "x", who: "ana" }).catch(
      (e: unknown) => e,
    );
    expect(notFound).toMatchObject({ code: "device_not_found", message: "no device x" });
  });

  it("creates the socket with mode 0660", async () => {
    server = await startControlServer({ path: join(dir, "run", "control.sock"), api: fakeApi(), log });
    const st = await stat(join(dir, "run", "control.sock"));
    expect(st.isSocket()).toBe(true);
    expect(st.mode & 0o777).toBe(0o660);
  });

  it("removes a stale socket file left by a killed daemon and serves on that path", async () => {
    const child = spawn(process.execPath, [
      "-e",
      `require("net").createServer().listen(${JSON.stringify(sock)}, () => process.kill(process.pid, "SIGKILL"))`,
    ]);
    await new Promise((r) => child.once("exit", r));
    expect((await lstat(sock)).isSocket()).toBe(true);
    const stale = await callControl(sock, "status").catch((e: unknown) => e);
    expect(stale).toMatchObject({ name: "ControlUnreachableError", reason: "not_running" });

    server = await startControlServer({ path: sock, api: fakeApi(), log });
    await expect(callControl(sock, "status")).resolves.toEqual(STATUS);
  });

  it("refuses to start over a socket that a live process still answers on", async () => {
    const other = createServer();
    await new Promise<void>((r) => other.listen(sock, r));
    try {
      await expect(startControlServer({ path: sock, api: fakeApi(), log })).rejects.toThrow(/in use/);
    } finally {
      await new Promise((r) => other.close(r));
    }
  });

  it("refuses to delete a path that is not a socket", async () => {
    await writeFile(sock, "not a socket");
    await expect(startControlServer({ path: sock, api: fakeApi(), log })).rejects.toThrow(/not a socket/);
    expect(existsSync(sock)).toBe(true);
  });

  it("removes its socket file on close", async () => {
    let asked = () => {};
    const inProgress = new Promise<void>((r) => (asked = r));
    const status = () => {
      asked();
      return never();
    };
    server = await startControlServer({ path: sock, api: fakeApi({ status }), log });
    const pending = callControl(sock, "status", {}, { timeoutMs: 5000 }).catch((e: unknown) => e);
    await inProgress; // the request is being served when the server closes
    await server.close();
    server = null;
    expect(existsSync(sock)).toBe(false);
    expect(await pending).toMatchObject({ reason: "closed" });
  });
});

describe("callControl when the daemon is not there", () => {
  it("throws ControlUnreachableError not_running when there is no socket file", async () => {
    const err = await callControl(sock, "status").catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ControlUnreachableError);
    expect(err).toMatchObject({ reason: "not_running", path: sock });
    expect((err as Error).message).toContain("not running");
  });

  it("throws ControlUnreachableError timeout when the daemon accepts but never answers", async () => {
    server = await startControlServer({ path: sock, api: fakeApi({ status: never }), log });
    const started = Date.now();
    const err = await callControl(sock, "status", {}, { timeoutMs: 150 }).catch((e: unknown) => e);
    expect(err).toMatchObject({ name: "ControlUnreachableError", reason: "timeout" });
    expect(Date.now() - started).toBeLessThan(2000);
  });
});
