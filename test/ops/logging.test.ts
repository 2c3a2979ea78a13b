import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Writable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildApp } from "../../cloud/app.ts";
import { DEFAULT_COMMAND_TIMEOUTS } from "../../cloud/devices/timeouts.ts";
import type { ControlApi } from "../../gateway/control/control-api.ts";
import { logTechnicianActions } from "../../gateway/control/technician-log.ts";
import { createLogger, LogFormatError, logFormat } from "../../shared/node/log.ts";
import { ISSUER, RecordingGateways, TOKEN_SECRET } from "../support/cloud-harness.ts";
import { FakeClock } from "../support/fake-clock.ts";
import { MOSQUITTO_URL } from "../support/site-harness.ts";
import { openTestDb, type TestDb } from "../support/test-db.ts";

const root = path.resolve(import.meta.dirname, "../..");

/** A destination that keeps what was written, and says whether it is a terminal. */
function sink(isTTY = false) {
  const lines: string[] = [];
  const stream = Object.assign(
    new Writable({
      write(chunk, _enc, cb) {
        lines.push(...String(chunk).split("\n").filter(Boolean));
        cb();
      },
    }),
    { isTTY },
  );
  return { stream, lines };
}

describe("the shared logger (shared/node/log.ts)", () => {
  it("writes JSON off a terminal and pretty lines on one; LOG_FORMAT overrides either way", () => {
    expect(logFormat({}, { isTTY: false })).toBe("json");
    expect(logFormat({}, { isTTY: true })).toBe("pretty");
    expect(logFormat({ LOG_FORMAT: "json" }, { isTTY: true })).toBe("json");
    expect(logFormat({ LOG_FORMAT: "pretty" }, { isTTY: false })).toBe("pretty");
    expect(() => logFormat({ LOG_FORMAT: "xml" }, { isTTY: false })).toThrow(LogFormatError);
    expect(() => logFormat({ LOG_FORMAT: "xml" }, { isTTY: false })).toThrow(
      /^LOG_FORMAT=xml: must be one of json, pretty$/,
    );

    const off = sink(false);
    createLogger({ level: "info", env: {}, destination: off.stream }).info({ n: 1 }, "hello");
    expect(JSON.parse(off.lines[0] as string)).toMatchObject({ msg: "hello", n: 1, level: 30 });

    const on = sink(true);
    createLogger({ level: "info", env: { NO_COLOR: "1" }, destination: on.stream }).info({ n: 1 }, "hello");
    expect(on.lines[0]).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: hello \{"n":1\}$/);
  });

  it("leads a gateway's pretty lines with its id instead of repeating it among the fields", () => {
    const out = sink(true);
    const log = createLogger({ level: "info", env: { TERM: "dumb" }, destination: out.stream });
    log.child({ gateway_id: "gw-cs-lockers" }).info({ bus: "bus0" }, "bus open");
    expect(out.lines[0]).toMatch(/INFO: gw-cs-lockers: bus open \{"bus":"bus0"\}$/);
    expect(out.lines[0]).not.toContain("gateway_id");
    // No colour with TERM=dumb (or NO_COLOR, or off a terminal).
    expect(out.lines[0]).not.toContain("\u001b");
  });

  it("keeps a terminal's lines short: a request in a few words, an error by its message; all at debug", () => {
    const short = sink(true);
    const log = createLogger({ level: "info", env: { NO_COLOR: "1" }, destination: short.stream });
    const request = {
      correlation_id: "5af73b2f-7c26",
      method: "POST",
      url: "/oauth2/token",
      status: 200,
      ms: 88.2,
    };
    log.info(request, "request");
    log.info({ ...request, status: 503 }, "request");
    log.warn(
      { err: Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" }) },
      "broker link error",
    );
    log
      .child({ gateway_id: "gw-1" })
      .warn({ bus: "bus0", err: new Error("Cannot lock port") }, "cannot open the bus");
    expect(short.lines).toHaveLength(4);
    expect(short.lines[0]).toMatch(/INFO: POST \/oauth2\/token 200 \(88 ms\)$/);
    expect(short.lines[1]).toMatch(
      /INFO: POST \/oauth2\/token 503 \(88 ms\) \{"correlation_id":"5af73b2f-7c26"\}$/,
    );
    expect(short.lines[2]).toMatch(/WARN: broker link error: connect ECONNREFUSED$/);
    expect(short.lines[3]).toMatch(/WARN: gw-1: cannot open the bus: Cannot lock port \{"bus":"bus0"\}$/);
    expect(short.lines.join("\n")).not.toContain("    at ");

    const full = sink(true);
    createLogger({ level: "debug", env: { NO_COLOR: "1" }, destination: full.stream }).warn(
      { err: new Error("Cannot lock port") },
      "cannot open the bus",
    );
    expect(full.lines.join("\n")).toMatch(/Cannot lock port[\s\S]*\n? +at /);

    // Off a terminal (JSON) nothing is shortened.
    const json = sink(false);
    createLogger({ level: "info", env: {}, destination: json.stream }).info(request, "request");
    expect(JSON.parse(json.lines[0] as string)).toMatchObject({ msg: "request", ...request });
  });

  it("masks card ids to their last four digits, wherever a card key sits", () => {
    const out = sink(false);
    const log = createLogger({ level: "info", format: "json", destination: out.stream });
    log.info({ reader: "reader-1", card: "04a23b1c99f0" }, "card tapped");
    log.info({ tap: { card: "04A2:3B:1C" } }, "nested");
    expect(out.lines.join("\n")).not.toMatch(/04a23b|04A2/);
    expect(JSON.parse(out.lines[0] as string).card).toBe("****99f0");
    expect(JSON.parse(out.lines[1] as string).tap.card).toBe("****3b1c");
  });
});

describe("the cloud's access log", () => {
  let store: TestDb;
  const out = sink(false);
  let app: Awaited<ReturnType<typeof buildApp>>;
  beforeAll(async () => {
    store = await openTestDb();
    app = await buildApp({
      db: store.db,
      clock: new FakeClock(),
      log: createLogger({ level: "info", format: "json", destination: out.stream }),
      gateways: new RecordingGateways(),
      tokenSecret: TOKEN_SECRET,
      issuer: ISSUER,
      timeouts: DEFAULT_COMMAND_TIMEOUTS,
    });
    await app.ready();
  });
  afterAll(async () => {
    await app.close();
    await store.drop();
  });

  it.each([
    ["a public route", "/livez", 200],
    ["an unknown route", "/nope", 404],
    ["a route without its token", "/location/v1/locations?access_token=s3cr3t-token", 401],
  ])(
    "writes one line for %s, with method, redacted url, status, ms and correlation id",
    async (_what, url, status) => {
      const id = `log-${status}`;
      const res = await app.inject({ method: "GET", url, headers: { "x-correlation-id": id } });
      expect(res.statusCode).toBe(status);
      const mine = out.lines.filter(
        (l) => l.includes(`"correlation_id":"${id}"`) && l.includes('"msg":"request"'),
      );
      expect(mine).toHaveLength(1);
      const line = JSON.parse(mine[0] as string);
      expect(line).toMatchObject({ method: "GET", status, correlation_id: id });
      expect(typeof line.ms).toBe("number");
      expect(line.url).toBe(url.replace("s3cr3t-token", "[redacted]"));
      expect(out.lines.join("\n")).not.toContain("s3cr3t-token");
      expect(out.lines.join("\n")).not.toMatch(/incoming request|request completed/);
    },
  );
});

describe("technician actions in the daemon's log", () => {
  const ok = { ok: true, result: "ok", latch: "unlocked" as const, ms: 310 };
  const unused = () => Promise.reject(new Error("not part of this test"));
  const api: ControlApi = {
    status: unused,
    devices: unused,
    device: unused,
    outbox: unused,
    keys: unused,
    probeSerial: unused,
    doctor: unused,
    actuate: async () => ok,
    testCycle: async (alias: string) => ({
      alias,
      steps: [
        { step: "unlock", ...ok },
        { step: "lock", ok: false, result: "jammed", latch: "unlocked" as const, ms: 3000 },
      ],
    }),
  };

  it("logs who did what to which device, why, and how it went", async () => {
    const out = sink(false);
    const logged = logTechnicianActions(
      api,
      createLogger({ level: "info", format: "json", destination: out.stream }),
    );
    await logged.actuate("locker-12", "unlock", "ana", "bike stuck, ticket 4711");
    await logged.testCycle("locker-12", "bob");
    expect(out.lines.map((l) => JSON.parse(l))).toEqual([
      expect.objectContaining({
        level: 30,
        msg: "technician action",
        device: "locker-12",
        action: "unlock",
        who: "ana",
        why: "bike stuck, ticket 4711",
        ok: true,
        result: "ok",
      }),
      expect.objectContaining({
        level: 40,
        msg: "technician action",
        device: "locker-12",
        action: "test-cycle",
        who: "bob",
        ok: false,
        result: "lock: jammed",
      }),
    ]);
  });
});

describe("a replica's normal stop", () => {
  // SIGTERM the moment a line is read, not at the next poll: the process is signalled right after it said
  // it, where a listener installed only after "cloud ready" left the signal its default action (death by
  // SIGTERM, exit code null). "gateway link connected" comes while it still starts.
  it.each([
    ["right after it is ready", '"cloud ready"'],
    ["while it starts", '"gateway link connected"'],
  ])(
    "logs no warning and no stack trace on SIGTERM %s, and exits 0 (a cloud on an external broker, as replicas run)",
    async (_when, line) => {
      const dir = mkdtempSync(path.join(tmpdir(), "replica-stop-"));
      const child = spawn(process.execPath, ["--import", "tsx", path.join(root, "cloud/main.ts")], {
        cwd: root,
        env: {
          PATH: process.env.PATH ?? "",
          HOST: "127.0.0.1",
          PORT: "0",
          DATA_DIR: dir,
          MQTT_URL: MOSQUITTO_URL,
          MQTT_PREFIX: `replica-stop-${process.pid}`,
          MQTT_CLIENT_ID: `replica-stop-${process.pid}`,
          LOG_FORMAT: "json",
          LOG_LEVEL: "info",
        },
        stdio: ["ignore", "pipe", "pipe"],
      });
      let out = "";
      let signalled = false;
      const read = (d: Buffer) => {
        out += d.toString();
        if (!signalled && out.includes(line)) {
          signalled = true;
          child.kill("SIGTERM");
        }
      };
      child.stdout.on("data", read);
      child.stderr.on("data", read);
      const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) =>
        child.once("exit", (code, signal) => r({ code, signal })),
      );
      let timer: NodeJS.Timeout | undefined;
      try {
        const ended = await Promise.race([
          exited,
          new Promise<never>((_, reject) => {
            timer = setTimeout(
              () => reject(new Error(`no exit within 40 s (signalled: ${signalled})\n${out}`)),
              40_000,
            );
          }),
        ]);
        // The exit code and the signal, and what it logged, in the failure message.
        expect({ ...ended, signalled }, out).toEqual({ code: 0, signal: null, signalled: true });
      } finally {
        clearTimeout(timer);
        if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
        rmSync(dir, { recursive: true, force: true });
      }
      const entries = out
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l) as { level: number; msg: string });
      expect(entries.map((e) => e.msg)).toContain("stopping");
      expect(entries.filter((e) => e.level >= 40)).toEqual([]);
      expect(out).not.toContain('"stack"');
    },
  );
});
