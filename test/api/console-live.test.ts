import type { AddressInfo } from "node:net";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { MAX_STREAMS_PER_SESSION } from "../../cloud/console/live-streams.ts";
import { type CloudHarness, startCloudHarness } from "../support/cloud-harness.ts";
import { consoleSignIn, createConsoleStaff } from "../support/console-api.ts";
import { fx, OP_A, OP_B } from "../support/fixture-site.ts";
import { gatewayReports } from "../support/gateway-reports.ts";
import { openSse, type SseEvent, type SseStream } from "../support/sse.ts";

/**
 * The console's live stream (GET /console/api/live): refused without a session in the spec's error body;
 * a staff member's stream carries its own operator's changes only (operator B's never reach operator A's
 * staff), a superadmin's every operator's; a session holds a few streams at most.
 */

const LIVE = "/console/api/live";
const L1 = fx.location("L1");
const B1 = fx.location("B1");

let h: CloudHarness;
let base: string;
const streams: SseStream[] = [];
const gw = gatewayReports(() => h);

beforeEach(async () => {
  // A keep-alive (and the session's check) every 100 ms, so the test sees them without waiting 15 s.
  h = await startCloudHarness({ console: { live: { keepAliveMs: 100 } } });
  await h.app.listen({ port: 0, host: "127.0.0.1" });
  base = `http://127.0.0.1:${(h.app.server.address() as AddressInfo).port}`;
  await createConsoleStaff(h, "viewer@a.example", "viewer", OP_A);
  await createConsoleStaff(h, "viewer@b.example", "viewer", OP_B);
  await createConsoleStaff(h, "root@example.com", "viewer", null);
});
afterEach(async () => {
  for (const s of streams.splice(0)) s.close();
  await h.close();
});

const csrf = new Map<string, string>();

async function signIn(email: string): Promise<string> {
  const { cookie, csrf: token } = await consoleSignIn(h, email);
  csrf.set(cookie, token);
  return cookie;
}

/** A stream of `email`'s, read from once it says it watches. */
async function live(cookie: string): Promise<SseStream> {
  const s = await openSse(`${base}${LIVE}`, { cookie: `console_session=${cookie}` });
  streams.push(s);
  expect(s.status).toBe(200);
  await s.next((e) => e.event === "ready");
  return s;
}

const isLocation = (id: string) => (e: SseEvent) =>
  e.event === "location" && (e.data as { id: string }).id === id;

/** A device of the location moves: someone opens it (a sensor report outside any command). */
const touch = (gatewayId: string, deviceId: string, lock: "LOCKED" | "UNLOCKED") =>
  gw.deviceState(gatewayId, deviceId, { lock_state: lock });

describe("the console's live stream", () => {
  it("is refused without a session, in the spec's error body", async () => {
    const res = await fetch(`${base}${LIVE}`, { headers: { accept: "text/event-stream" } });
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({ status_code: 401, error_code: "ERRORS.UNAUTHORIZED" });
    const wrong = await fetch(`${base}${LIVE}`, { headers: { cookie: "console_session=not-a-session" } });
    expect(wrong.status).toBe(401);
  });

  it("says where it stands, with the cloud's time, and how long to wait before reconnecting", async () => {
    const res = await fetch(`${base}${LIVE}`, {
      headers: { cookie: `console_session=${await signIn("viewer@a.example")}` },
    });
    expect(res.headers.get("content-type")).toMatch(/^text\/event-stream/);
    expect(res.headers.get("cache-control")).toContain("no-cache");
    const reader = res.body?.getReader();
    let text = "";
    while (!text.includes("event: ready")) {
      const { value } = (await reader?.read()) ?? {};
      text += new TextDecoder().decode(value);
    }
    expect(text).toMatch(/^retry: \d+\n\n/);
    expect(text).toContain(`"now":"${h.clock.now().toISOString()}"`);
    await reader?.cancel();
  });

  it("carries the staff member's own operator's changes and never another operator's", async () => {
    const a = await live(await signIn("viewer@a.example"));
    const b = await live(await signIn("viewer@b.example"));
    // B's change first: had it leaked, it would reach A's stream no later than A's own change.
    await touch("gw-b1", fx.device("B1", "1"), "UNLOCKED");
    await b.next(isLocation(B1));
    await touch("gw-a1", fx.device("L1", "1"), "UNLOCKED");
    const got = await a.next(isLocation(L1));
    expect(got.data).toMatchObject({ id: L1, data_version: expect.any(Number) });
    await tamper("gw-b1", fx.device("B1", "1"));
    await b.next((e) => e.event === "alarms");
    await tamper("gw-a1", fx.device("L1", "1"));
    expect((await a.next((e) => e.event === "alarms")).data).toEqual({ operator_id: OP_A });
    const leaked = a.events.filter(
      (e) => JSON.stringify(e.data).includes(B1) || JSON.stringify(e.data).includes(OP_B),
    );
    expect(leaked).toEqual([]);
    expect(b.events.filter((e) => JSON.stringify(e.data).includes(L1))).toEqual([]);
  });

  it("carries every operator's changes to a superadmin", async () => {
    const root = await live(await signIn("root@example.com"));
    await touch("gw-b1", fx.device("B1", "1"), "UNLOCKED");
    await root.next(isLocation(B1));
    await touch("gw-a1", fx.device("L1", "1"), "UNLOCKED");
    await root.next(isLocation(L1));
  });

  it("holds a few streams per session", async () => {
    const cookie = await signIn("viewer@a.example");
    const open = [];
    for (let i = 0; i < MAX_STREAMS_PER_SESSION; i++) open.push(await live(cookie));
    const over = await fetch(`${base}${LIVE}`, { headers: { cookie: `console_session=${cookie}` } });
    expect(over.status).toBe(429);
    expect(await over.json()).toMatchObject({ error_code: "ERRORS.RATE_LIMITED" });
    (open[0] as SseStream).close();
    await expect.poll(() => h.app.consoleLive.count()).toBe(MAX_STREAMS_PER_SESSION - 1);
    await live(cookie);
  });

  it("keeps the connection with comments, and ends once the session is signed out", async () => {
    const cookie = await signIn("viewer@a.example");
    const res = await fetch(`${base}${LIVE}`, { headers: { cookie: `console_session=${cookie}` } });
    const reader = res.body?.getReader();
    let text = "";
    while (!text.includes(": keep-alive")) {
      const { value } = (await reader?.read()) ?? {};
      text += new TextDecoder().decode(value);
    }
    const out = await h.app.inject({
      method: "DELETE",
      url: "/console/api/session",
      cookies: { console_session: cookie },
      headers: { "x-csrf-token": csrf.get(cookie) ?? "" },
    });
    expect(out.statusCode).toBe(204);
    // The server ends the stream at its next keep-alive: the read comes to its end.
    for (;;) if ((await reader?.read())?.done !== false) break;
    await expect.poll(() => h.app.consoleLive.count()).toBe(0);
  });
});

let seq = 1000;
/** A tamper the gateway reports: raises an alarm of the device's operator. */
const tamper = (gatewayId: string, deviceId: string) =>
  h.report(gatewayId, {
    type: "hardware_event",
    gateway_id: gatewayId,
    seq: ++seq,
    observed_at: h.clock.now().toISOString(),
    device_id: deviceId,
    source: "bus0/1/1",
    event: "tamper",
    detail: "",
  });
