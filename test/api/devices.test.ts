import type { LightMyRequestResponse } from "fastify";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { ErrorBody } from "../../shared/api/common.ts";
import { Device, DeviceList } from "../../shared/api/device.ts";
import { type CloudHarness, startCloudHarness } from "../support/cloud-harness.ts";
import { CLIENTS, fx } from "../support/fixture-site.ts";

/** The instant applyManifest ran at: the fake clock's start. */
const T0 = "2026-01-15T10:00:00.000Z";

/** Every field of the spec's Device resource (user and settings need DEVICE_PRIVATE_FIELDS). */
const PUBLIC_FIELDS = [
  "alias",
  "code",
  "comment",
  "commands",
  "hardware_id",
  "hardware_state",
  "has_access_lists",
  "has_allowlist",
  "has_camera",
  "has_otp_support",
  "has_subscription",
  "heartbeat",
  "heartbeat_health",
  "heartbeat_latency",
  "heartbeat_v2",
  "id",
  "location",
  "lock_state",
  "nr",
  "power_save_strategy",
  "price_list",
  "sleep_state",
  "state",
  "tags",
  "type",
  "uri",
  "wifi_rssi",
].sort();
const PRIVATE_FIELDS = ["settings", "user"];

const LOCKING = [
  "lock",
  "unlock",
  "book",
  "cancel-booking",
  "force-lock",
  "force-unlock",
  "force-cancel-booking",
  "sync-device",
];
const SESSIONLESS = ["lock", "unlock", "force-lock", "force-unlock", "sync-device"];

const deviceUrl = (id: string) => `/device/v1/devices/${id}`;
const listUrl = (locationId: string) => `/device/v1/locations/${locationId}/devices`;

function expectErrorBody(res: LightMyRequestResponse, status: number, code: string): ErrorBody {
  expect(res.statusCode).toBe(status);
  const body = ErrorBody.strict().parse(res.json());
  expect(body.status_code).toBe(status);
  expect(body.error_code).toBe(code);
  expect(body.correlation_id).toBe(res.headers["x-correlation-id"]);
  return body;
}

describe("device reads", () => {
  let h: CloudHarness;
  beforeAll(async () => {
    h = await startCloudHarness();
  });
  afterAll(() => h.close());

  async function getDevice(id: string, as: string = CLIENTS.admin): Promise<Device> {
    const res = await h.call(as, { method: "GET", url: deviceUrl(id) });
    expect(res.statusCode).toBe(200);
    return Device.parse(res.json());
  }

  it("lists every device of a location, each carrying every Device field", async () => {
    const res = await h.call(CLIENTS.admin, { method: "GET", url: listUrl(fx.location("L1")) });
    expect(res.statusCode).toBe(200);
    const body = DeviceList.parse(res.json());
    expect(body.uri).toBe(listUrl(fx.location("L1")));
    expect(body.data.map((d) => d.alias).sort()).toEqual(["1", "2", "3", "4", "5", "gw-a1"]);
    for (const d of res.json().data as Record<string, unknown>[]) {
      expect(Object.keys(d).sort()).toEqual([...PUBLIC_FIELDS, ...PRIVATE_FIELDS].sort());
      expect(d.location).toEqual({
        id: fx.location("L1"),
        uri: `/location/v1/locations/${fx.location("L1")}`,
      });
    }
  });

  it("shows a fresh locker's detail with the documented values", async () => {
    const id = fx.device("L1", "1");
    const res = await h.call(CLIENTS.admin, { method: "GET", url: deviceUrl(id) });
    expect(res.statusCode).toBe(200);
    const d = res.json();
    expect(Object.keys(d).sort()).toEqual([...PUBLIC_FIELDS, ...PRIVATE_FIELDS].sort());
    expect(d).toEqual({
      id,
      uri: deviceUrl(id),
      type: "LOCKER",
      alias: "1",
      code: "",
      nr: "1",
      state: { changed_at: T0, value: "UNLOCKED", timeout_at: null },
      lock_state: "UNLOCKED",
      hardware_state: "NORMAL",
      heartbeat_v2: null,
      heartbeat_health: null,
      heartbeat: null,
      heartbeat_latency: null,
      wifi_rssi: null,
      sleep_state: "",
      power_save_strategy: "NONE",
      commands: Object.fromEntries(LOCKING.map((c) => [c, `${deviceUrl(id)}/commands`])),
      has_otp_support: false,
      has_access_lists: false,
      has_allowlist: false,
      has_subscription: false,
      has_camera: false,
      price_list: null,
      location: { id: fx.location("L1"), uri: `/location/v1/locations/${fx.location("L1")}` },
      user: null,
      settings: { created_at: T0, updated_at: T0, deep_link: "" },
      tags: [],
      comment: "",
      hardware_id: "",
    });
  });

  it("answers the same record from the list and from the detail", async () => {
    const list = await h.call(CLIENTS.admin, { method: "GET", url: listUrl(fx.location("D1")) });
    expect(list.statusCode).toBe(200);
    for (const d of list.json().data as { id: string }[]) {
      const one = await h.call(CLIENTS.admin, { method: "GET", url: deviceUrl(d.id) });
      expect(one.json()).toEqual(d);
    }
  });

  it("shows nr as a deprecated copy of alias for every device", async () => {
    for (const code of ["L1", "D1", "H1"]) {
      const res = await h.call(CLIENTS.admin, { method: "GET", url: listUrl(fx.location(code)) });
      for (const d of res.json().data as Device[]) expect(d.nr).toBe(d.alias);
    }
  });

  it("shows each power-save strategy and an awake sleep_state", async () => {
    expect((await getDevice(fx.device("L1", "3"))).power_save_strategy).toBe("NONE");
    const remote = await getDevice(fx.device("L1", "4"));
    expect(remote.power_save_strategy).toBe("REMOTE_WAKEUP");
    expect(remote.sleep_state).toBe("");
    const local = await getDevice(fx.device("L1", "5"));
    expect(local.power_save_strategy).toBe("LOCAL_WAKEUP");
    expect(local.sleep_state).toBe("");
  });

  it("shows doors LOCKED (their ready state) with a locked physical lock", async () => {
    for (const alias of ["door", "legacy-door"]) {
      const d = await getDevice(fx.device("H1", alias));
      expect(d.state.value).toBe("LOCKED");
      expect(d.state.timeout_at).toBeNull();
      expect(d.lock_state).toBe("LOCKED");
      expect(d.hardware_state).toBe("NORMAL");
    }
    expect((await getDevice(fx.device("H1", "door"))).type).toBe("BIKE_HOUSE_DOOR");
    expect((await getDevice(fx.device("H1", "legacy-door"))).type).toBe("DOOR");
  });

  it("lists exactly the commands each device type accepts, each pointing at the device's command URI", async () => {
    const cases: [string, string, readonly string[]][] = [
      ["L1 locker", fx.device("L1", "1"), LOCKING],
      ["H1 locker", fx.device("H1", "1"), LOCKING],
      ["BIKE_DOCK", fx.device("D1", "1"), LOCKING],
      ["DOCK", fx.device("D1", "2"), LOCKING],
      ["DOCK_SESSIONLESS", fx.device("D1", "3"), SESSIONLESS],
      ["BIKE_HOUSE_DOOR", fx.device("H1", "door"), ["unlock"]],
      ["DOOR", fx.device("H1", "legacy-door"), ["unlock"]],
      ["GUARD with camera", fx.guard("gw-a1"), ["take-photo"]],
      ["GUARD without camera", fx.guard("gw-a2"), []],
      ["GUARD of a bike house", fx.guard("gw-a3"), []],
    ];
    for (const [label, id, expected] of cases) {
      const d = await getDevice(id);
      expect(Object.keys(d.commands), label).toEqual([...expected]);
      for (const uri of Object.values(d.commands)) expect(uri, label).toBe(`${deviceUrl(id)}/commands`);
    }
  });

  it("shows a GUARD as the gateway of its location, with has_camera from the manifest", async () => {
    const withCamera = await getDevice(fx.guard("gw-a1"));
    expect(withCamera.type).toBe("GUARD");
    expect(withCamera.alias).toBe("gw-a1");
    expect(withCamera.has_camera).toBe(true);
    expect(withCamera.location.id).toBe(fx.location("L1"));
    const without = await getDevice(fx.guard("gw-a2"));
    expect(without.has_camera).toBe(false);
    expect(without.location.id).toBe(fx.location("D1"));
  });

  it("hides user and settings from a caller without DEVICE_PRIVATE_FIELDS, in the list and the detail (S14)", async () => {
    const list = await h.call(CLIENTS.basic, { method: "GET", url: listUrl(fx.location("L1")) });
    expect(list.statusCode).toBe(200);
    const data = list.json().data as Record<string, unknown>[];
    expect(data).toHaveLength(6);
    for (const d of data) {
      expect(Object.keys(d).sort()).toEqual(PUBLIC_FIELDS);
      expect(d).not.toHaveProperty("user");
      expect(d).not.toHaveProperty("settings");
    }
    const one = await h.call(CLIENTS.basic, { method: "GET", url: deviceUrl(fx.device("L1", "1")) });
    expect(one.statusCode).toBe(200);
    expect(Object.keys(one.json()).sort()).toEqual(PUBLIC_FIELDS);
    expect(one.body).not.toContain("deep_link");
  });

  it("shows user and settings to a caller with DEVICE_PRIVATE_FIELDS (S14)", async () => {
    const d = await getDevice(fx.device("L1", "2"), CLIENTS.admin);
    expect(d).toHaveProperty("user", null);
    expect(d.settings).toEqual({ created_at: T0, updated_at: T0, deep_link: "" });
  });

  it("answers 200 with an empty data array for another operator's location (the device list has no 404)", async () => {
    const res = await h.call(CLIENTS.other, { method: "GET", url: listUrl(fx.location("L1")) });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ data: [], uri: listUrl(fx.location("L1")) });
    expect(res.body).not.toContain(fx.device("L1", "1"));

    const reverse = await h.call(CLIENTS.admin, { method: "GET", url: listUrl(fx.location("B1")) });
    expect(reverse.statusCode).toBe(200);
    expect(reverse.json().data).toEqual([]);

    const own = await h.call(CLIENTS.other, { method: "GET", url: listUrl(fx.location("B1")) });
    expect((own.json().data as Device[]).map((d) => d.alias).sort()).toEqual(["1", "gw-b1"]);
  });

  it("answers 200 with an empty data array for a location that does not exist", async () => {
    const id = "0b6a3c9e-9a52-4d1f-8c3e-2f7c1d0e4a55";
    const res = await h.call(CLIENTS.admin, { method: "GET", url: listUrl(id) });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ data: [], uri: listUrl(id) });
  });

  it("answers another operator's device GET with a 404 identical to a random id's (S12)", async () => {
    const existing = fx.device("L1", "1");
    const random = "5f1d7a0e-3b2c-4e8f-9a6d-7c4b2e1f0a93";
    const a = await h.call(CLIENTS.other, { method: "GET", url: deviceUrl(existing) });
    const b = await h.call(CLIENTS.other, { method: "GET", url: deviceUrl(random) });
    const ea = expectErrorBody(a, 404, "ERRORS.NOT_FOUND");
    const eb = expectErrorBody(b, 404, "ERRORS.NOT_FOUND");
    // Only the echoed id and the correlation id may differ.
    expect(ea.error_message.replace(existing, "{id}")).toBe(eb.error_message.replace(random, "{id}"));
    expect(Object.keys(ea).sort()).toEqual(Object.keys(eb).sort());
    expect(a.headers["content-type"]).toBe(b.headers["content-type"]);
    for (const leak of ["LOCKER", "UNLOCKED", fx.location("L1"), "gw-a1"]) expect(a.body).not.toContain(leak);
  });

  it("answers a device id that is not a uuid like an unknown one: 404 (spec: the device table)", async () => {
    const res = await h.call(CLIENTS.admin, { method: "GET", url: deviceUrl("not-a-uuid") });
    expect(expectErrorBody(res, 404, "ERRORS.NOT_FOUND").error_message).toContain("not-a-uuid");
  });

  it("lists no devices for a location id that is not a uuid: the device list has no 404 and no 400", async () => {
    const res = await h.call(CLIENTS.admin, { method: "GET", url: listUrl("L1") });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ data: [], uri: listUrl("L1") });
  });

  it("answers 401 to device reads without a bearer token", async () => {
    const res = await h.call(null, { method: "GET", url: deviceUrl(fx.device("L1", "1")) });
    expectErrorBody(res, 401, "ERRORS.UNAUTHORIZED");
    const list = await h.call(null, { method: "GET", url: listUrl(fx.location("L1")) });
    expectErrorBody(list, 401, "ERRORS.UNAUTHORIZED");
  });
});

describe("device health and occupant", () => {
  let h: CloudHarness;
  beforeEach(async () => {
    h = await startCloudHarness();
  });
  afterEach(() => h.close());

  async function getDevice(id: string): Promise<Device> {
    const res = await h.call(CLIENTS.admin, { method: "GET", url: deviceUrl(id) });
    expect(res.statusCode).toBe(200);
    return Device.parse(res.json());
  }

  it("fills heartbeat_v2 after a heartbeat and follows it through UNHEALTHY and DEAD", async () => {
    const locker = fx.device("L1", "1");
    const t0 = h.clock.now().toISOString();
    await h.heartbeat({
      gateway_id: "gw-a1",
      sent_at: t0,
      devices: [
        { device_id: locker, reachable: true },
        { device_id: fx.device("L1", "2"), reachable: false },
      ],
    });

    const fresh = await getDevice(locker);
    expect(fresh.heartbeat_v2).toEqual({
      health: "HEALTHY",
      dead_since: null,
      sent_at: t0,
      latency_millis: 0,
    });
    expect(fresh.heartbeat_health).toBe("HEALTHY");
    expect(fresh.heartbeat_latency).toBeNull();
    expect(fresh.wifi_rssi).toBeNull();
    expect((await getDevice(fx.guard("gw-a1"))).heartbeat_v2?.health).toBe("HEALTHY");
    // A device the gateway did not reach has no health data yet.
    expect((await getDevice(fx.device("L1", "2"))).heartbeat_v2).toBeNull();
    // Another gateway's devices are untouched.
    expect((await getDevice(fx.device("D1", "1"))).heartbeat_v2).toBeNull();

    h.clock.advance(16_000);
    const late = await getDevice(locker);
    expect(late.heartbeat_v2?.health).toBe("UNHEALTHY");
    expect(late.heartbeat_v2?.dead_since).toBeNull();
    expect(late.heartbeat_health).toBe("UNHEALTHY");

    h.clock.advance(15_000);
    const dead = await getDevice(locker);
    expect(dead.heartbeat_v2?.health).toBe("DEAD");
    expect(dead.heartbeat_v2?.dead_since).toBe(new Date(Date.parse(t0) + 30_000).toISOString());
    expect(dead.heartbeat_health).toBe("DEAD");
  });

  it("shows LONG_DEAD in heartbeat_v2 but only DEAD in the deprecated heartbeat_health", async () => {
    const locker = fx.device("L1", "3");
    // Last seen by a heartbeat 3 hours ago.
    const seen = h.clock.now().toISOString();
    await h.heartbeat({
      gateway_id: "gw-a1",
      sent_at: seen,
      devices: [{ device_id: locker, reachable: true }],
    });
    h.clock.advance(3 * 60 * 60 * 1000);
    const d = await getDevice(locker);
    expect(d.heartbeat_v2?.health).toBe("LONG_DEAD");
    expect(d.heartbeat_v2?.dead_since).toBe(new Date(Date.parse(seen) + 30_000).toISOString());
    expect(d.heartbeat_health).toBe("DEAD");
  });

  it("marks every device of a gateway DEAD at once when the gateway goes offline", async () => {
    const t0 = h.clock.now().toISOString();
    await h.heartbeat({
      gateway_id: "gw-a1",
      sent_at: t0,
      devices: [{ device_id: fx.device("L1", "1"), reachable: true }],
    });
    h.clock.advance(5_000);
    const off = h.clock.now().toISOString();
    await h.status({ gateway_id: "gw-a1", online: false, at: off });
    const d = await getDevice(fx.device("L1", "1"));
    expect(d.heartbeat_v2?.health).toBe("DEAD");
    expect(d.heartbeat_v2?.dead_since).toBe(off);
    expect(d.heartbeat_health).toBe("DEAD");
  });

  it("shows the sleep_state a gateway reports", async () => {
    const locker = fx.device("L1", "5");
    await h.report("gw-a1", {
      type: "device_state",
      gateway_id: "gw-a1",
      seq: 1,
      observed_at: h.clock.now().toISOString(),
      device_id: locker,
      sleep_state: "DEEP_SLEEP",
    });
    expect((await getDevice(locker)).sleep_state).toBe("DEEP_SLEEP");
  });
});
