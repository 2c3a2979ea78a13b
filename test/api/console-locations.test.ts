import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { keySyncRepository } from "../../cloud/key-sync/key-sync-repository.ts";
import { connectionRepository } from "../../cloud/site-events/connection-repository.ts";
import { DEAD_AFTER_MS } from "../../shared/domain/health.ts";
import type { StaffRole } from "../../shared/domain/staff-roles.ts";
import { type CloudHarness, startCloudHarness } from "../support/cloud-harness.ts";
import { signedInStaff } from "../support/console-api.ts";
import { fx, OP_A } from "../support/fixture-site.ts";
import { rider, riderFlow } from "../support/rider-sessions.ts";

const OUTBOX = "0b0b0b0b-0000-4000-8000-000000000001";
const L1_DEVICES = ["1", "2", "3", "4", "5"].map((a) => fx.device("L1", a));

let h: CloudHarness;

beforeEach(async () => {
  h = await startCloudHarness();
});
afterEach(() => h.close());

/** A session cookie of a new staff member of `role` (operatorId null: a superadmin). */
async function signedIn(role: StaffRole, operatorId: string | null = OP_A): Promise<string> {
  const email = `${role}-${operatorId ?? "all"}@example.com`;
  return (await signedInStaff(h, email, role, operatorId)).cookie;
}

const get = (cookie: string | null, url: string) =>
  h.app.inject({ method: "GET", url, cookies: cookie ? { console_session: cookie } : {} });

/** gw-a1 heard now, reaching every locker of L1, its outbox standing at `from`. */
const beat = (from = 7) =>
  h.heartbeat({
    gateway_id: "gw-a1",
    sent_at: h.clock.now().toISOString(),
    devices: L1_DEVICES.map((device_id) => ({ device_id, reachable: true })),
    outbox: { id: OUTBOX, unconfirmed_from: from },
  });

type Summary = { code: string; connection: string; devices: Record<string, number> };
const codes = (res: { json(): { data: Summary[] } }) => res.json().data.map((l) => l.code);

describe("the console's location list", () => {
  it("answers 401 without a session", async () => {
    const res = await get(null, "/console/api/locations");
    expect(res.statusCode).toBe(401);
    expect(res.json()).toMatchObject({ error_code: "ERRORS.UNAUTHORIZED", status_code: 401 });
  });

  it("lists every location of the staff member's operator with its connection and counts; a superadmin's lists all", async () => {
    const viewer = await signedIn("viewer");
    await beat();
    const res = await get(viewer, "/console/api/locations");
    expect(res.statusCode, res.body).toBe(200);
    const data = res.json().data as Summary[];
    expect(data.map((l) => l.code)).toEqual(["D1", "H1", "L1"]);
    expect(data.find((l) => l.code === "L1")).toMatchObject({
      id: fx.location("L1"),
      operator_id: OP_A,
      name: "#L1 Lockers one",
      address: "Street 1",
      connection: "online",
      devices: { available: 5, online: 5, total: 5 },
    });
    expect(data.find((l) => l.code === "D1")).toMatchObject({ connection: "unknown" });
    // What the public API says of the same location, counted the same way.
    const api = await h.call("a-admin", {
      method: "GET",
      url: `/location/v1/locations/${fx.location("L1")}`,
    });
    expect(api.json().devices).toMatchObject({ available: 5, online: 5, total: 5 });

    const superadmin = await signedIn("viewer", null);
    expect(codes(await get(superadmin, "/console/api/locations"))).toEqual(["B1", "D1", "H1", "L1"]);
  });

  it("filters by text (code, label, address, any case) and by connection", async () => {
    const viewer = await signedIn("viewer");
    await beat();
    expect(codes(await get(viewer, "/console/api/locations?q=docks"))).toEqual(["D1"]);
    expect(codes(await get(viewer, "/console/api/locations?q=STREET"))).toEqual(["L1"]);
    expect(codes(await get(viewer, `/console/api/locations?q=${encodeURIComponent("#l1 lock")}`))).toEqual([
      "L1",
    ]);
    expect(codes(await get(viewer, "/console/api/locations?connection=online"))).toEqual(["L1"]);
    expect(codes(await get(viewer, "/console/api/locations?connection=unknown&connection=online"))).toEqual([
      "D1",
      "H1",
      "L1",
    ]);
    expect(codes(await get(viewer, "/console/api/locations?connection=unknown&q=h1"))).toEqual(["H1"]);
    const bad = await get(viewer, "/console/api/locations?connection=sideways");
    expect(bad.statusCode).toBe(400);
  });

  it("says offline when every device went dead, and outage once the cloud confirmed it", async () => {
    const viewer = await signedIn("operator");
    await beat();
    const deadSince = new Date(h.clock.now().getTime() + DEAD_AFTER_MS).toISOString();
    h.clock.advance(DEAD_AFTER_MS + 1_000);
    const l1 = async () => ((await get(viewer, "/console/api/locations?q=L1")).json().data as Summary[])[0];
    expect(await l1()).toMatchObject({ connection: "offline", offline_since: deadSince });
    await connectionRepository(h.db).confirmOutage(fx.location("L1"), deadSince, h.clock.now().toISOString());
    expect(await l1()).toMatchObject({ connection: "outage", offline_since: deadSince });
    expect(codes(await get(viewer, "/console/api/locations?connection=outage"))).toEqual(["L1"]);
  });
});

describe("the console's location page", () => {
  it("gives the device grid by alias and the gateway panel, saying null for what the gateway does not report", async () => {
    const viewer = await signedIn("viewer");
    await beat(7);
    const heardAt = h.clock.now().toISOString();
    const res = await get(viewer, `/console/api/locations/${fx.location("L1")}`);
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body.now).toBe(heardAt);
    expect(body.location).toMatchObject({ code: "L1", connection: "online" });
    expect(body.occupant_shown).toBe(true);
    expect(body.devices.map((d: { alias: string }) => d.alias)).toEqual(["1", "2", "3", "4", "5", "gw-a1"]);
    expect(body.devices[5]).toMatchObject({ type: "GUARD", health: "HEALTHY" });
    expect(body.devices[0]).toEqual({
      id: fx.device("L1", "1"),
      alias: "1",
      type: "LOCKER",
      state: { value: "UNLOCKED", changed_at: expect.any(String), timeout_at: null },
      lock_state: expect.any(String),
      hardware_state: "NORMAL",
      health: "HEALTHY",
      dead_since: null,
      last_seen_at: heardAt,
      sleep_state: expect.any(String),
      power_save_strategy: "NONE",
      occupant: null,
    });
    expect(body.devices[3]).toMatchObject({ alias: "4", power_save_strategy: "REMOTE_WAKEUP" });
    expect(body.gateways).toEqual([
      {
        id: "gw-a1",
        online: true,
        health: "HEALTHY",
        status: null,
        status_at: null,
        last_heartbeat_at: heardAt,
        outbox: {
          id: OUTBOX,
          unconfirmed_from: 7,
          reported_at: heardAt,
          last_applied_seq: null,
          depth: null,
        },
        keys: null,
        runtime_version: null,
        started_at: null,
        uptime_s: null,
      },
    ]);
  });

  it("shows the outbox depth, version and uptime a current gateway's heartbeat says, on the cloud's clock", async () => {
    const viewer = await signedIn("viewer");
    const panel = async () =>
      (await get(viewer, `/console/api/locations/${fx.location("L1")}`)).json().gateways[0];
    // The gateway's wall clock is an hour behind the cloud's; it started 3 days and 4 hours before this beat.
    const gatewayNow = h.clock.now().getTime() - 3_600_000;
    const ranMs = (3 * 24 + 4) * 3_600_000;
    await h.heartbeat({
      gateway_id: "gw-a1",
      sent_at: new Date(gatewayNow).toISOString(),
      devices: L1_DEVICES.map((device_id) => ({ device_id, reachable: true })),
      outbox: { id: OUTBOX, unconfirmed_from: 7, depth: 12 },
      runtime: { version: "0.1.0", started_at: new Date(gatewayNow - ranMs).toISOString() },
    });
    const heardAt = h.clock.now();
    expect(await panel()).toMatchObject({
      last_heartbeat_at: heardAt.toISOString(),
      outbox: { id: OUTBOX, unconfirmed_from: 7, depth: 12 },
      runtime_version: "0.1.0",
      started_at: new Date(heardAt.getTime() - ranMs).toISOString(),
      uptime_s: ranMs / 1000,
    });

    // An empty outbox is 0, not unknown; a gateway gone quiet does not seem to run on.
    h.clock.advance(10_000);
    await h.heartbeat({
      gateway_id: "gw-a1",
      sent_at: new Date(gatewayNow + 10_000).toISOString(),
      devices: [],
      outbox: { id: OUTBOX, unconfirmed_from: 19, depth: 0 },
      runtime: { version: "0.1.0", started_at: new Date(gatewayNow - ranMs).toISOString() },
    });
    h.clock.advance(DEAD_AFTER_MS * 2);
    expect(await panel()).toMatchObject({ online: false, outbox: { depth: 0 }, uptime_s: ranMs / 1000 + 10 });

    // The same gateway put back to an older version, whose heartbeat says none of it: unknown again.
    await beat(19);
    expect(await panel()).toMatchObject({
      outbox: { depth: null },
      runtime_version: null,
      started_at: null,
      uptime_s: null,
    });
  });

  it("leaves the start unknown when the gateway's clock went back since it started", async () => {
    const viewer = await signedIn("viewer");
    const sent = h.clock.now().getTime();
    await h.heartbeat({
      gateway_id: "gw-a1",
      sent_at: new Date(sent).toISOString(),
      devices: [],
      runtime: { version: "0.1.0", started_at: new Date(sent + 60_000).toISOString() },
    });
    const body = (await get(viewer, `/console/api/locations/${fx.location("L1")}`)).json();
    expect(body.gateways[0]).toMatchObject({ runtime_version: "0.1.0", started_at: null, uptime_s: null });
  });

  it("sets the key-set version the gateway holds against the cloud's", async () => {
    const viewer = await signedIn("viewer");
    const at = h.clock.now().toISOString();
    const keys = keySyncRepository(h.db);
    await keys.nextVersion("gw-a1", at);
    await keys.confirm("gw-a1", 1, at);
    await keys.nextVersion("gw-a1", at);
    const body = (await get(viewer, `/console/api/locations/${fx.location("L1")}`)).json();
    expect(body.gateways[0]).toMatchObject({
      online: false,
      health: null,
      last_heartbeat_at: null,
      outbox: null,
      keys: { cloud_version: 2, held_version: 1, confirmed_at: at },
    });
  });

  it("says a gateway that reported itself offline is offline at once, with when it said so", async () => {
    const viewer = await signedIn("viewer");
    await beat();
    h.clock.advance(1_000);
    const at = h.clock.now().toISOString();
    await h.status({ gateway_id: "gw-a1", online: false, at });
    const body = (await get(viewer, `/console/api/locations/${fx.location("L1")}`)).json();
    expect(body.gateways[0]).toMatchObject({ online: false, health: "DEAD", status: false, status_at: at });
    expect(body.location.connection).toBe("offline");
  });

  it("shows a device's occupant and its state's deadline while a command runs, to a viewer too", async () => {
    const viewer = await signedIn("viewer");
    await beat();
    const alice = await rider(h, OP_A, "alice");
    const flow = riderFlow(h);
    const locker = fx.device("L1", "2");
    await flow.lock(alice, locker);
    const cmd = await flow.command(alice, locker, { command: "unlock" });
    const body = (await get(viewer, `/console/api/locations/${fx.location("L1")}`)).json();
    const cell = body.devices.find((d: { alias: string }) => d.alias === "2");
    expect(cell.occupant).toBe(alice.id);
    expect(cell.state.timeout_at).toEqual(expect.any(String));
    expect(cmd.device.id).toBe(locker);
  });

  it("answers 404 for another operator's location and for one that does not exist; a superadmin sees it", async () => {
    const viewer = await signedIn("admin");
    for (const id of [fx.location("B1"), "00000000-0000-4000-8000-000000000000", "nope"]) {
      const res = await get(viewer, `/console/api/locations/${id}`);
      expect(res.statusCode).toBe(404);
      expect(res.json()).toMatchObject({ error_code: "ERRORS.NOT_FOUND" });
    }
    const superadmin = await signedIn("viewer", null);
    const res = await get(superadmin, `/console/api/locations/${fx.location("B1")}`);
    expect(res.statusCode).toBe(200);
    expect(res.json().gateways.map((g: { id: string }) => g.id)).toEqual(["gw-b1"]);
  });
});
