import { Writable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildApp } from "../../cloud/app.ts";
import { DEFAULT_COMMAND_TIMEOUTS } from "../../cloud/devices/timeouts.ts";
import type { ControlApi } from "../../gateway/control/control-api.ts";
import { logTechnicianActions } from "../../gateway/control/technician-log.ts";
import { createLogger, LogFormatError, logFormat } from "../../shared/node/log.ts";
import { ISSUER, RecordingGateways, TOKEN_SECRET } from "../support/cloud-harness.ts";
import { FakeClock } from "../support/fake-clock.ts";
import { openTestDb, type TestDb } from "../support/test-db.ts";

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
