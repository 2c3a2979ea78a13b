import http from "node:http";
import type { FastifyInstance, LightMyRequestResponse } from "fastify";
import pino from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { buildApp } from "../../cloud/app.ts";
import {
  createSettledNotifier,
  type InProcessSettledNotifier,
} from "../../cloud/commands/command-settled.ts";
import { applyUpMessage } from "../../cloud/gateway-link/apply-up-message.ts";
import { Command } from "../../shared/api/command.ts";
import { ErrorBody } from "../../shared/api/common.ts";
import { UpMessage } from "../../shared/wire/messages.ts";
import {
  type CloudHarness,
  ISSUER,
  RecordingGateways,
  startCloudHarness,
  TOKEN_SECRET,
} from "../support/cloud-harness.ts";
import { eventually } from "../support/eventually.ts";
import { CLIENTS, fx } from "../support/fixture-site.ts";
import { gatewayReports } from "../support/gateway-reports.ts";

/**
 * RFC 7240 `Prefer: wait=N` on the command POST and GET: the answer comes once the command is SUCCESS or
 * ERROR, or after N seconds (at most 30) of the injected clock; ended in this process it answers at once,
 * ended by another replica it is found by a light poll of the command's row.
 */

const LOCKER = fx.device("L1", "1");
const POLL_MS = 250;
const THROTTLE_MS = 3_000;
const DELIVERY_MS = 30_000;

let h: CloudHarness;
/** Timers the harness holds while no request waits (none today; counted so the tests need not know). */
let idleTimers: number;
const { progress } = gatewayReports(() => h);

beforeEach(async () => {
  h = await startCloudHarness({ commandWaitPollMs: POLL_MS });
  idleTimers = h.clock.pendingTimers();
});
afterEach(() => h.close());

const nowMs = () => h.clock.now().getTime();
const names = (c: Command) => c.events.map((e) => e.name);
const commandOf = (id: string) => ({ id, device: { id: LOCKER, uri: `/device/v1/devices/${LOCKER}` } });

function post(headers: Record<string, string> = {}, body: Record<string, unknown> = { command: "lock" }) {
  return h.call(CLIENTS.admin, {
    method: "POST",
    url: `/device/v1/devices/${LOCKER}/commands`,
    payload: body,
    headers,
  });
}

function get(id: string, headers: Record<string, string> = {}) {
  return h.call(CLIENTS.admin, { method: "GET", url: `/device/v1/commands/${id}`, headers });
}

function commandIn(res: LightMyRequestResponse): Command {
  expect(res.statusCode, res.body).toBe(200);
  return Command.parse(res.json());
}

/** The id of the command the cloud last handed to the (recording) broker. */
const lastCommandId = () => h.gateways.last().request.command_id;

/**
 * Resolves once `n` requests wait on their command and each has read it and set its next poll: between
 * polls, with its deadline and its poll timer pending.
 */
async function betweenPolls(n = 1, settled: InProcessSettledNotifier = h.settled) {
  await eventually(() => {
    expect(settled.waiting()).toBe(n);
    expect(h.clock.pendingTimers()).toBe(idleTimers + 2 * n);
  });
}

/** Nothing is left behind by a wait: no subscription, no timer. */
function expectReleased() {
  expect(h.settled.waiting()).toBe(0);
  expect(h.clock.pendingTimers()).toBe(idleTimers);
}

describe("POST with Prefer: wait", () => {
  it("answers SUCCESS as soon as the gateway's report is applied, without the client polling", async () => {
    const t0 = nowMs();
    const pending = post({ prefer: "wait=10" });
    await betweenPolls();
    expect(await progress("gw-a1", commandOf(lastCommandId()), "SUCCESS", { lock_state: "LOCKED" })).toBe(
      "applied",
    );
    const res = await pending;
    const cmd = commandIn(res);
    expect(cmd.state).toEqual({ value: "SUCCESS", reason: "", timeout_at: null });
    expect(names(cmd)).toEqual(["REQUEST_INITIATED", "REQUEST_SENT", "RESPONSE_DEVICE_LOCKED"]);
    expect(res.headers["preference-applied"]).toBe("wait=10");
    // Answered on the notice alone: the clock did not move, and nothing is left waiting.
    expect(nowMs()).toBe(t0);
    expectReleased();
  });

  it("answers with the command as it is after N seconds when nothing happens (other preferences ignored)", async () => {
    const t0 = nowMs();
    let answered = false;
    const pending = post({ prefer: "respond-async, wait=5" }).finally(() => (answered = true));
    await betweenPolls();
    h.clock.advance(4_999);
    // The deadline releases the wait at once when it fires; until then it is held.
    expect(h.settled.waiting()).toBe(1);
    h.clock.advance(1);
    expect(h.settled.waiting()).toBe(0);
    const res = await pending;
    expect(answered).toBe(true);
    const cmd = commandIn(res);
    expect(cmd.state).toEqual({
      value: "SENT",
      reason: "",
      timeout_at: new Date(t0 + DELIVERY_MS).toISOString(),
    });
    expect(res.headers["preference-applied"]).toBe("wait=5");
    expectReleased();
  });

  it("cuts a wait over 30 s to 30 s and says so", async () => {
    const pending = post({ prefer: "wait=600" });
    await betweenPolls();
    h.clock.advance(29_999);
    expect(h.settled.waiting()).toBe(1);
    h.clock.advance(1);
    const res = await pending;
    expect(commandIn(res).state.value).toBe("SENT");
    expect(res.headers["preference-applied"]).toBe("wait=30");
    expectReleased();
  });

  it.each([
    ["no Prefer header", {}],
    ["a malformed wait", { prefer: "wait=soon" }],
    ["a wait of 0", { prefer: "wait=0" }],
    ["only other preferences", { prefer: "respond-async; wait=5" }],
  ])("answers at once, as before, with %s (no Preference-Applied)", async (_, headers) => {
    const t0 = nowMs();
    const res = await post(headers);
    expect(commandIn(res).state.value).toBe("SENT");
    expect(res.headers["preference-applied"]).toBeUndefined();
    expect(nowMs()).toBe(t0);
    expectReleased();
  });
});

describe("GET with Prefer: wait", () => {
  it("answers at once when the command has already ended", async () => {
    const cmd = commandIn(await post());
    expect(await progress("gw-a1", cmd, "SUCCESS", { lock_state: "LOCKED" })).toBe("applied");
    const t0 = nowMs();
    const res = await get(cmd.id, { prefer: "wait=30" });
    expect(commandIn(res).state.value).toBe("SUCCESS");
    expect(res.headers["preference-applied"]).toBe("wait=30");
    expect(nowMs()).toBe(t0);
    expectReleased();
  });

  it("answers once the command ends in this process", async () => {
    const cmd = commandIn(await post());
    const pending = get(cmd.id, { prefer: "wait=20" });
    await betweenPolls();
    expect(await progress("gw-a1", cmd, "RECEIVED")).toBe("applied");
    expect(h.settled.waiting()).toBe(1);
    expect(await progress("gw-a1", cmd, "ERROR", { reason: "jammed" })).toBe("applied");
    const res = await pending;
    expect(commandIn(res).state).toEqual({ value: "ERROR", reason: "jammed", timeout_at: null });
    expect(res.headers["preference-applied"]).toBe("wait=20");
    expectReleased();
  });

  it("wakes with ERROR when the deadline sweep ends the command", async () => {
    const t0 = nowMs();
    const cmd = commandIn(await post());
    h.clock.advance(DELIVERY_MS - 5_000);
    const pending = get(cmd.id, { prefer: "wait=30" });
    await betweenPolls();
    h.clock.advance(5_000);
    await betweenPolls();
    expect(await h.sweep()).toBeGreaterThan(0);
    const res = await pending;
    const ended = commandIn(res);
    expect(ended.state.value).toBe("ERROR");
    expect(names(ended)).toContain("REQUEST_TIMED_OUT");
    expect(res.headers["preference-applied"]).toBe("wait=30");
    // Woken by the sweep at the delivery deadline, 25 s before its own wait would have ended.
    expect(nowMs()).toBe(t0 + DELIVERY_MS);
    expectReleased();
  });

  it("answers a command it cannot see 404 at once, holding nothing", async () => {
    const res = await get("00000000-0000-4000-8000-000000000000", { prefer: "wait=5" });
    expect(res.statusCode).toBe(404);
    expect(ErrorBody.parse(res.json()).error_code).toBe("ERRORS.NOT_FOUND");
    expect(res.headers["preference-applied"]).toBeUndefined();
    expectReleased();
  });
});

describe("across replicas sharing the store", () => {
  let other: FastifyInstance;
  let otherSettled: InProcessSettledNotifier;
  const log = pino({ level: "silent" });

  beforeEach(async () => {
    otherSettled = createSettledNotifier();
    other = await buildApp({
      db: h.db,
      clock: h.clock,
      log,
      gateways: new RecordingGateways(),
      tokenSecret: TOKEN_SECRET,
      issuer: ISSUER,
      timeouts: h.timeouts,
      settled: otherSettled,
      commandWaitPollMs: POLL_MS,
    });
    await other.ready();
  });
  afterEach(() => other.close());

  /** The other replica's gateway link applies gw-a1's report: only that replica hears of it at once. */
  const otherReplica = gatewayReports(
    () => ({
      ...h,
      report: (gatewayId, msg) =>
        applyUpMessage(h.db, gatewayId, UpMessage.parse(msg), {
          now: h.clock.now(),
          timeouts: h.timeouts,
          log,
          settled: otherSettled,
        }),
    }),
    1_000,
  );

  it("a waiter here learns of a report the other replica applied at its next poll", async () => {
    const t0 = nowMs();
    const pending = post({ prefer: "wait=10" });
    await betweenPolls();
    const id = lastCommandId();
    expect(await otherReplica.progress("gw-a1", commandOf(id), "SUCCESS")).toBe("applied");
    // No notice reached this replica: the waiter still waits, until its poll reads the row.
    expect(h.settled.waiting()).toBe(1);
    h.clock.advance(POLL_MS);
    const res = await pending;
    expect(commandIn(res).state.value).toBe("SUCCESS");
    expect(res.headers["preference-applied"]).toBe("wait=10");
    expect(nowMs()).toBe(t0 + POLL_MS);
    expectReleased();
  });

  it("a waiter here learns that the other replica superseded its command", async () => {
    const pending = post({ prefer: "wait=10" });
    await betweenPolls();
    const id = lastCommandId();
    h.clock.advance(THROTTLE_MS);
    await betweenPolls();
    const force = await other.inject({
      method: "POST",
      url: `/device/v1/devices/${LOCKER}/commands`,
      headers: { authorization: `Bearer ${await h.token(CLIENTS.admin)}` },
      payload: { command: "force-unlock", reason: "TESTING" },
    });
    expect(force.statusCode, force.body).toBe(200);
    expect(h.settled.waiting()).toBe(1);
    h.clock.advance(POLL_MS);
    const cmd = commandIn(await pending);
    expect(cmd.id).toBe(id);
    expect(cmd.state.value).toBe("ERROR");
    expect(names(cmd)).toContain("REQUEST_SUPERSEDED");
    expectReleased();
  });
});

describe("idempotent POST with Prefer: wait", () => {
  it("holds the key while it waits, then replays the first answer at once without Preference-Applied", async () => {
    const key = { "idempotency-key": "wait-1" };
    const pending = post({ ...key, prefer: "wait=10" });
    await betweenPolls();
    const during = await post({ ...key, prefer: "wait=10" });
    expect(during.statusCode).toBe(409);
    expect(ErrorBody.parse(during.json()).error_code).toBe("ERRORS.IDEMPOTENCY_KEY_IN_USE");

    expect(await progress("gw-a1", commandOf(lastCommandId()), "SUCCESS")).toBe("applied");
    const first = await pending;
    expect(commandIn(first).state.value).toBe("SUCCESS");
    expect(first.headers["preference-applied"]).toBe("wait=10");

    // The first answer as kept: the replay does not wait again, so it says no wait was applied.
    for (const prefer of ["wait=10", undefined]) {
      const replay = await post({ ...key, ...(prefer ? { prefer } : {}) });
      expect(replay.headers["idempotent-replayed"]).toBe("true");
      expect(replay.headers["preference-applied"]).toBeUndefined();
      expect(replay.json()).toEqual(first.json());
      expectReleased();
    }
    expect(h.gateways.commands).toHaveLength(1);
  });
});

describe("a client that leaves while it waits", () => {
  async function listening(): Promise<number> {
    await h.app.listen({ host: "127.0.0.1", port: 0 });
    const address = h.app.server.address();
    if (!address || typeof address === "string") throw new Error("not listening on a port");
    return address.port;
  }

  it.each(["POST", "GET"] as const)("lets go of its timers and subscription (%s)", async (method) => {
    const port = await listening();
    const id = method === "GET" ? commandIn(await post()).id : null;
    const req = http.request({
      host: "127.0.0.1",
      port,
      method,
      path: id ? `/device/v1/commands/${id}` : `/device/v1/devices/${LOCKER}/commands`,
      headers: {
        authorization: `Bearer ${await h.token(CLIENTS.admin)}`,
        prefer: "wait=30",
        ...(id ? {} : { "content-type": "application/json" }),
      },
    });
    req.on("error", () => {});
    req.end(id ? undefined : JSON.stringify({ command: "lock" }));
    await betweenPolls();
    req.destroy();
    await eventually(expectReleased);
  });
});
