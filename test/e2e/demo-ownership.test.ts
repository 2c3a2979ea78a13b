import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newMessageId } from "../../cloud/webhooks/webhook-payload.ts";
import { signWebhook } from "../../cloud/webhooks/webhook-signature.ts";
import { type RunningDemo, startDemo } from "../../demo/demo.ts";
import { OffsetClock } from "../support/offset-clock.ts";

/**
 * What an attacker with two riders of the demo operator tried, against the whole demo (`npm start`: cloud,
 * embedded broker, gateways on the simulator): nobody opens, takes or cancels what another rider holds, a
 * closed list guards its doors, and the camera is the operator's. Every refusal leaves the latch, the state
 * and the holder's session as they were; the owner still can.
 */
const ENV = { DEMO_CLIENT_SECRET: "x".repeat(12), DEMO_GATEWAY_SECRET: "y".repeat(12) };
const HARBOUR_RESIDENTS = "5d1c3a70-2f1e-4b8a-9c61-0a7e3b5c4d21";
const ANN = "7d4a52e0-3c1b-4f6e-8a90-1b2c3d4e5f01";
const BOB = "7d4a52e0-3c1b-4f6e-8a90-1b2c3d4e5f02";
/** The per-device throttle between commands that move a latch. */
const THROTTLE_MS = 3_000;

type Json = Record<string, unknown>;

describe("a rider's locker is the rider's (the demo)", () => {
  let dir: string;
  let demo: RunningDemo;
  let ann: string;
  let bob: string;
  let admin: string;
  let devices: Record<string, string>;
  /** The cloud's clock: real timers, and a `now` the test moves past the throttle instead of waiting. */
  const clock = new OffsetClock();

  const api = async (token: string, method: string, path: string, body?: unknown, prefer?: string) => {
    const res = await fetch(`${demo.cloud.baseUrl}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body === undefined ? {} : { "content-type": "application/json" }),
        ...(prefer ? { prefer } : {}),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: (text ? JSON.parse(text) : null) as Json };
  };
  /** A command, answered once it has ended (or refused at once). */
  const command = (token: string, device: string, body: Json) =>
    api(token, "POST", `/device/v1/devices/${devices[device]}/commands`, body, "wait=20");
  /** A device as the API shows it, without its heartbeat fields: they move with every heartbeat, refusal or not. */
  const device = async (name: string) =>
    Object.fromEntries(
      Object.entries((await api(admin, "GET", `/device/v1/devices/${devices[name]}`)).body).filter(
        ([key]) => !key.startsWith("heartbeat"),
      ),
    );
  const sessionsOf = async (token: string) =>
    (await api(token, "GET", "/session/v2/sessions?limit=100")).body.data as Json[];

  /** Signs a demo rider in the way the app does: a nonce registered with the operator's server, then sign-in. */
  async function signIn(userId: string, serviceUserId: string): Promise<string> {
    const challenge = `nonce-${userId}-${Date.now()}`;
    const raw = JSON.stringify({ user_id: userId, challenge_token: challenge });
    const headers = signWebhook({
      id: newMessageId(),
      at: new Date(),
      body: raw,
      secrets: [demo.verification.secret],
    });
    const registered = await fetch(`${demo.verification.url}/challenges`, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body: raw,
    });
    expect(registered.status).toBeLessThan(300);
    const res = await fetch(`${demo.cloud.baseUrl}/external-users-auth/v1/sign-in`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        service_user_id: serviceUserId,
        operator_id: demo.verification.operatorId,
        challenge_token: challenge,
      }),
    });
    expect(res.status, await res.clone().text()).toBe(200);
    return ((await res.json()) as { access_token: string }).access_token;
  }

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "demo-ownership-"));
    demo = await startDemo({
      env: {
        ...ENV,
        PORT: "0",
        MQTT_PORT: "0",
        DATA_DIR: dir,
        DEMO_SKIP_GATEWAYS: "gw-ms-docks,gw-pk-house",
      },
      log: pino({ level: process.env.TEST_LOG_LEVEL ?? "silent" }),
      clock,
    });
    const token = await fetch(`${demo.cloud.baseUrl}/oauth2/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({
        grant_type: "client_credentials",
        client_id: demo.settings.clientId,
        client_secret: ENV.DEMO_CLIENT_SECRET,
      }),
    });
    admin = ((await token.json()) as { access_token: string }).access_token;
    ann = await signIn("rider-ann", ANN);
    bob = await signIn("rider-bob", BOB);
    devices = {};
    const locations = (await api(admin, "GET", "/location/v1/locations")).body.data as Json[];
    for (const code of ["CS-L", "HB-H"]) {
      const at = locations.find((l) => l.code === code) as Json;
      const listed = (await api(admin, "GET", `/device/v1/locations/${at.id}/devices`)).body.data as Json[];
      for (const d of listed) devices[`${code} ${d.type === "GUARD" ? "GUARD" : d.alias}`] = d.id as string;
    }
  });
  afterAll(async () => {
    await demo?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it("Bob cannot unlock the locker Ann locked: 403, the latch stays shut and Ann's session runs on; Ann can", async () => {
    const locked = await command(ann, "CS-L 1", { command: "lock" });
    expect(locked.body.state).toMatchObject({ value: "SUCCESS" });
    const before = await device("CS-L 1");
    expect(before).toMatchObject({ state: { value: "LOCKED" }, lock_state: "LOCKED", user: { id: ANN } });

    const refused = await command(bob, "CS-L 1", { command: "unlock" });
    expect(refused.status).toBe(403);
    expect(refused.body.error_code).toBe("ERRORS.FORBIDDEN");
    expect(JSON.stringify(refused.body)).not.toContain(ANN);
    expect(await device("CS-L 1")).toEqual(before);
    expect((await sessionsOf(ann)).filter((s) => s.status === "active")).toHaveLength(1);

    clock.jump(THROTTLE_MS);
    const unlocked = await command(ann, "CS-L 1", { command: "unlock" });
    expect(unlocked.body.state).toMatchObject({ value: "SUCCESS" });
    expect(await device("CS-L 1")).toMatchObject({ state: { value: "UNLOCKED" }, lock_state: "UNLOCKED" });
  });

  it("Ann cannot take the locker Bob booked: lock and book are 403, Bob's booking stands", async () => {
    const booked = await command(bob, "CS-L 2", { command: "book" });
    expect(booked.body.state).toMatchObject({ value: "SUCCESS" });
    const before = await device("CS-L 2");
    expect(before).toMatchObject({ state: { value: "BOOKED" } });
    for (const name of ["lock", "book", "cancel-booking"]) {
      const refused = await command(ann, "CS-L 2", { command: name });
      expect(refused.status, name).toBe(403);
    }
    expect(await device("CS-L 2")).toEqual(before);
    expect((await sessionsOf(bob)).filter((s) => s.status === "booked")).toHaveLength(1);
    expect((await sessionsOf(ann)).filter((s) => s.status === "booked")).toHaveLength(0);

    const cancelled = await command(bob, "CS-L 2", { command: "cancel-booking" });
    expect(cancelled.body.state).toMatchObject({ value: "SUCCESS" });
  });

  it("the Harbour residents' door opens only for its members", async () => {
    const refused = await command(bob, "HB-H door-north", { command: "unlock" });
    expect(refused.status).toBe(403);
    expect(refused.body.error_code).toBe("ERRORS.ACCESS_DENIED");
    expect(await device("HB-H door-north")).toMatchObject({
      state: { value: "LOCKED" },
      lock_state: "LOCKED",
    });

    const added = await api(
      admin,
      "POST",
      `/access-control/v1/mgmt/access-lists/${HARBOUR_RESIDENTS}/users`,
      {
        user_id: ANN,
      },
    );
    expect(added.status).toBe(204);
    const opened = await command(ann, "HB-H door-north", { command: "unlock" });
    expect(opened.body.state).toMatchObject({ value: "SUCCESS" });
    expect((await command(bob, "HB-H door-north", { command: "unlock" })).status).toBe(403);
  });

  it("a rider cannot fire the site's camera; the operator's client with DEVICE_ADMIN can", async () => {
    const refused = await command(bob, "CS-L GUARD", { command: "take-photo" });
    expect(refused.status).toBe(403);
    expect((await command(admin, "CS-L GUARD", { command: "take-photo" })).status).toBe(200);
  });
});
