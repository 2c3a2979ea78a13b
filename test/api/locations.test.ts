import { randomUUID } from "node:crypto";
import type { LightMyRequestResponse } from "fastify";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { deviceRepository } from "../../cloud/devices/device-repository.ts";
import { type CloudHarness, startCloudHarness } from "../support/cloud-harness.ts";
import { CLIENTS, fx, OP_A } from "../support/fixture-site.ts";

const LIST_URL = "/location/v1/locations";
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const RFC3339 = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/;

const RESTRICTED_LIST_FIELDS = [
  "owner_id",
  "operator_id",
  "reseller_id",
  "distributor_id",
  "description",
  "comment",
  "private_tags",
  "has_maintenance_issues",
  "audit",
];
const RESTRICTED_DETAIL_FIELDS = [
  "generation",
  "auto_restarts_enabled",
  "power_save_strategy",
  "analytics_dashboard_id",
];
const DETAIL_ONLY_FIELDS = [
  "subscriptions",
  "descriptions",
  "whitelists",
  "external_devices",
  "organizations",
  "access_list_ids",
  "allowlist_ids",
  "rfid_parking",
  "app_parking",
  "booking_available",
  "e_charging",
  "free_of_charge",
  "free_parking_details",
  "free_parking_summary",
  "free_parking_hours",
  "segment",
  "district",
  "region",
  "city",
  "use_case",
  "state",
  "terms_updated_at",
  "max_user_sessions",
];

type Json = Record<string, unknown>;
type Loc = Json & { id: string; code: string; devices: Json & { resources?: Json[] } };

/** The spec's standard error body, and nothing else. */
function expectSpecError(res: LightMyRequestResponse, status: number, code: string): Json {
  expect(res.statusCode).toBe(status);
  const body = res.json() as Json;
  expect(Object.keys(body).sort()).toEqual(["correlation_id", "error_code", "error_message", "status_code"]);
  expect(body.status_code).toBe(status);
  expect(body.error_code).toBe(code);
  expect(typeof body.error_message).toBe("string");
  expect(typeof body.correlation_id).toBe("string");
  expect(body.correlation_id).not.toBe("");
  return body;
}

/** Every field the list view shares with the detail view, with its type (spec: Resources → Location). */
function expectListFields(l: Json) {
  const id = l.id as string;
  expect(id).toMatch(UUID);
  expect(l.uri).toBe(`/location/v1/locations/${id}`);
  for (const f of ["code", "label", "name", "type", "status", "connection", "offline_since", "address"]) {
    expect(typeof l[f], f).toBe("string");
  }
  expect(l.name).toBe(`#${l.code} ${l.label}`);
  expect(["online", "partially_online", "offline", "unknown"]).toContain(l.connection);
  expect(typeof l.latitude).toBe("number");
  expect(typeof l.longitude).toBe("number");
  for (const f of ["support_phone", "support_email", "terms_url"]) expect(typeof l[f], f).toBe("string");
  expect(Array.isArray(l.tags)).toBe(true);
  for (const t of l.tags as unknown[]) expect(typeof t).toBe("string");
  expect(typeof l.allowlisted).toBe("boolean");
  expect(typeof l.has_access_lists).toBe("boolean");
  expect(l.icon).toEqual({
    png2x: expect.any(String),
    svg: expect.any(String),
    png: expect.any(String),
    type: expect.any(String),
  });
  const devices = l.devices as Json;
  expect(devices).toMatchObject({
    total: expect.any(Number),
    available: expect.any(Number),
    online: expect.any(Number),
    uri: `/device/v1/locations/${id}/devices`,
    icon: expect.any(String),
  });
  expect(l.rental_devices).toEqual({
    available: expect.any(Number),
    icon: expect.any(String),
    uri: expect.any(String),
  });
}

function byCode(list: Loc[], code: string): Loc {
  const l = list.find((x) => x.code === code);
  if (!l) throw new Error(`no location ${code} in ${list.map((x) => x.code).join(",")}`);
  return l;
}

describe("GET /location/v1/locations", () => {
  let h: CloudHarness;
  beforeAll(async () => {
    h = await startCloudHarness();
  });
  afterAll(() => h.close());

  const list = async (query = "", as: string = CLIENTS.admin) => {
    const res = await h.call(as, { method: "GET", url: `${LIST_URL}${query}` });
    expect(res.statusCode, res.body).toBe(200);
    return res.json() as { data: Loc[]; uri: string };
  };
  const codes = async (query: string) => (await list(query)).data.map((l) => l.code);

  describe("shape", () => {
    it("answers {data, uri} with every list field of the right type", async () => {
      const body = await list();
      expect(body.uri).toBe(LIST_URL);
      expect(body.data.map((l) => l.code)).toEqual(["D1", "H1", "L1"]);
      for (const l of body.data) expectListFields(l);
    });

    it("shows the fixture's values: name is '#<code> <label>', counts, tags and coordinates", async () => {
      const l1 = byCode((await list()).data, "L1");
      expect(l1).toMatchObject({
        id: fx.location("L1"),
        code: "L1",
        label: "Lockers one",
        name: "#L1 Lockers one",
        type: "BIKE_LOCKERS",
        status: "LAUNCHED",
        address: "Street 1",
        latitude: 52.37,
        longitude: 4.89,
        tags: ["covered", "station"],
        connection: "unknown",
        offline_since: "",
        devices: { total: 5, available: 0, online: 0 },
      });
      expect(byCode((await list()).data, "D1").name).toBe("#D1 Docks one");
    });

    it("keeps the detail-only fields out of the list view", async () => {
      for (const l of (await list()).data) {
        for (const f of [...DETAIL_ONLY_FIELDS, ...RESTRICTED_DETAIL_FIELDS])
          expect(l, f).not.toHaveProperty(f);
      }
    });

    it("answers 401 with the spec body without a bearer token", async () => {
      const res = await h.call(null, { method: "GET", url: LIST_URL });
      expectSpecError(res, 401, "ERRORS.UNAUTHORIZED");
    });
  });

  describe("tag filter", () => {
    it("keeps the locations carrying a single tag", async () => {
      expect(await codes("?tag=station")).toEqual(["D1", "L1"]);
      expect(await codes("?tag=covered")).toEqual(["L1"]);
    });

    it("with the tag repeated, keeps only locations carrying every tag", async () => {
      expect(await codes("?tag=station&tag=covered")).toEqual(["L1"]);
      expect(await codes("?tag=covered&tag=station")).toEqual(["L1"]);
    });

    it("answers an empty list when no location carries the tag", async () => {
      expect(await codes("?tag=nowhere")).toEqual([]);
      expect(await codes("?tag=station&tag=nowhere")).toEqual([]);
    });

    it("does not match private tags", async () => {
      expect(await codes("?tag=vip")).toEqual([]);
    });
  });

  describe("lat_lng and radius", () => {
    it("sorts by distance from lat_lng, nearest first", async () => {
      expect(await codes("?lat_lng=52.36,4.88")).toEqual(["D1", "L1", "H1"]);
      expect(await codes("?lat_lng=51.92,4.48")).toEqual(["H1", "D1", "L1"]);
    });

    it("keeps only locations within radius metres of lat_lng", async () => {
      // L1 and D1 are about 1.3 km apart; H1 is about 55 km away.
      expect(await codes("?lat_lng=52.37,4.89&radius=2000")).toEqual(["L1", "D1"]);
      expect(await codes("?lat_lng=52.37,4.89&radius=1000")).toEqual(["L1"]);
      expect(await codes("?lat_lng=52.37,4.89&radius=0")).toEqual(["L1"]);
      expect(await codes("?lat_lng=52.37,4.89&radius=100000")).toEqual(["L1", "D1", "H1"]);
      expect(await codes("?lat_lng=0,0&radius=1000")).toEqual([]);
    });

    it("accepts spaces around the comma and combines with the tag filter", async () => {
      expect(await codes("?lat_lng=52.36%2C%204.88&tag=station")).toEqual(["D1", "L1"]);
    });

    it.each(["10", "abc", "-5", "", "1e3", "10&radius=20"])(
      "ignores radius without lat_lng, whatever its value (radius=%s)",
      async (radius) => {
        expect(await codes(`?radius=${radius}`)).toEqual(["D1", "H1", "L1"]);
      },
    );

    it("checks radius only once lat_lng is given, and then refuses a repeated one", async () => {
      const res = await h.call(CLIENTS.admin, {
        method: "GET",
        url: `${LIST_URL}?lat_lng=52.37,4.89&radius=10&radius=20`,
      });
      expect(expectSpecError(res, 400, "ERRORS.VALIDATION_FAILED").error_message).toContain("radius");
    });
  });

  describe("bad query parameters", () => {
    const BAD: [param: string, query: string][] = [
      ["lat_lng", "?lat_lng=abc"],
      ["lat_lng", "?lat_lng=52.37"],
      ["lat_lng", "?lat_lng=91,4.89"],
      ["lat_lng", "?lat_lng=52.37,181"],
      ["radius", "?lat_lng=52.37,4.89&radius=ten"],
      ["radius", "?lat_lng=52.37,4.89&radius=-5"],
      ["include", "?include=everything"],
      ["colour", "?colour=red"],
    ];
    const badQuery = async (query: string) =>
      expectSpecError(
        await h.call(CLIENTS.admin, { method: "GET", url: `${LIST_URL}${query}` }),
        400,
        "ERRORS.VALIDATION_FAILED",
      );

    it.each(BAD)("answers 400 with the spec body for a bad %s: %s", async (_, query) => {
      await badQuery(query);
    });

    it.each(BAD)("names the bad parameter %s in the message (%s)", async (param, query) => {
      expect((await badQuery(query)).error_message).toContain(param);
    });

    it("answers 400 for an unknown include value on the detail view too", async () => {
      const res = await h.call(CLIENTS.admin, {
        method: "GET",
        url: `${LIST_URL}/${fx.location("L1")}?include=devices`,
      });
      expect(expectSpecError(res, 400, "ERRORS.VALIDATION_FAILED").error_message).toContain("include");
    });
  });

  describe("include=resources", () => {
    it("adds devices.resources with alias, available and online for each locking device", async () => {
      const data = (await list("?include=resources")).data;
      const l1 = byCode(data, "L1");
      expect(l1.devices.resources?.map((r) => r.alias)).toEqual(["1", "2", "3", "4", "5"]);
      for (const r of l1.devices.resources ?? []) {
        expect(r).toEqual({
          alias: expect.any(String),
          available: { last_updated: expect.stringMatching(RFC3339), value: false },
          online: { last_updated: expect.stringMatching(RFC3339), value: false },
        });
      }
      // Doors and the GUARD are not resources: H1 has one locker.
      expect(byCode(data, "H1").devices.resources?.map((r) => r.alias)).toEqual(["1"]);
      expect(byCode(data, "D1").devices.resources).toHaveLength(3);
    });

    it("leaves devices.resources absent without include", async () => {
      for (const l of (await list()).data) expect(l.devices).not.toHaveProperty("resources");
      const res = await h.call(CLIENTS.admin, { method: "GET", url: `${LIST_URL}/${fx.location("L1")}` });
      expect(res.json().devices).not.toHaveProperty("resources");
    });

    it("adds devices.resources on the detail view with include=resources", async () => {
      const res = await h.call(CLIENTS.admin, {
        method: "GET",
        url: `${LIST_URL}/${fx.location("D1")}?include=resources`,
      });
      expect(res.statusCode).toBe(200);
      expect(res.json().devices.resources.map((r: { alias: string }) => r.alias)).toEqual(["1", "2", "3"]);
    });
  });

  describe("detail view", () => {
    it("has every list field and every detail field with the right type", async () => {
      const res = await h.call(CLIENTS.admin, { method: "GET", url: `${LIST_URL}/${fx.location("L1")}` });
      expect(res.statusCode).toBe(200);
      const d = res.json() as Json;
      expectListFields(d);
      const uri = `/location/v1/locations/${fx.location("L1")}`;
      for (const f of ["subscriptions", "descriptions", "whitelists", "external_devices", "organizations"]) {
        expect(d[f], f).toEqual({ uri: expect.any(String) });
      }
      expect(d.subscriptions).toEqual({ uri: `${uri}/subscriptions` });
      expect(d.whitelists).toEqual({ uri: `/whitelist/v1/locations/${fx.location("L1")}/whitelists` });
      expect(d.access_list_ids).toEqual([]);
      expect(d.allowlist_ids).toEqual([]);
      for (const f of ["rfid_parking", "app_parking", "booking_available", "e_charging", "free_of_charge"]) {
        expect(typeof d[f], f).toBe("boolean");
      }
      for (const f of [
        "free_parking_details",
        "free_parking_summary",
        "segment",
        "district",
        "region",
        "city",
        "use_case",
        "state",
        "terms_updated_at",
      ]) {
        expect(typeof d[f], f).toBe("string");
      }
      expect(d.free_parking_hours).toEqual(expect.any(Number));
      expect(d.max_user_sessions).toBe(2);
      expect(d).toMatchObject({ code: "L1", name: "#L1 Lockers one", devices: { total: 5 } });
    });

    it("answers 404 with the spec body for an unknown uuid", async () => {
      const res = await h.call(CLIENTS.admin, { method: "GET", url: `${LIST_URL}/${randomUUID()}` });
      expectSpecError(res, 404, "ERRORS.NOT_FOUND");
    });

    it("answers an id that is not a uuid like an unknown one: 404 (spec: GET and PATCH location)", async () => {
      for (const method of ["GET", "PATCH"] as const) {
        const res = await h.call(CLIENTS.admin, {
          method,
          url: `${LIST_URL}/L1`,
          ...(method === "PATCH" ? { payload: { label: "x" } } : {}),
        });
        expect(expectSpecError(res, 404, "ERRORS.NOT_FOUND").error_message).toContain("L1");
      }
    });
  });

  describe("restricted fields (S14)", () => {
    it("are present with their values for a client with RESTRICTED_FIELDS", async () => {
      const l1 = byCode((await list()).data, "L1");
      expect(l1).toMatchObject({
        owner_id: "",
        operator_id: expect.any(String),
        reseller_id: "",
        distributor_id: "",
        description: "",
        comment: "internal note",
        private_tags: ["vip"],
        has_maintenance_issues: false,
        audit: { uri: expect.any(String) },
      });
      for (const f of RESTRICTED_DETAIL_FIELDS) expect(l1, f).not.toHaveProperty(f);
      const res = await h.call(CLIENTS.admin, { method: "GET", url: `${LIST_URL}/${fx.location("L1")}` });
      expect(res.json()).toMatchObject({
        comment: "internal note",
        private_tags: ["vip"],
        generation: "",
        auto_restarts_enabled: false,
        power_save_strategy: "NONE",
        analytics_dashboard_id: "",
      });
    });

    // A manifest's location attrs are a patch without defaults (LocationAttrsPatch), merged over the stored
    // ones (cloud/manifest/apply-manifest.ts): operator_id, which no manifest sets, stays the operator's.
    it("operator_id shows the operator that runs the location", async () => {
      expect(byCode((await list()).data, "L1").operator_id).toBe(OP_A);
    });

    it.each([
      ["without permissions", CLIENTS.basic],
      ["with public tag management only", CLIENTS.tagger],
    ])("are absent, not null, from the list for a client %s", async (_, client) => {
      const res = await h.call(client, { method: "GET", url: `${LIST_URL}?include=resources` });
      expect(res.statusCode).toBe(200);
      const data = res.json().data as Loc[];
      expect(data.map((l) => l.code)).toEqual(["D1", "H1", "L1"]);
      for (const l of data) {
        expectListFields(l);
        for (const f of [...RESTRICTED_LIST_FIELDS, ...RESTRICTED_DETAIL_FIELDS])
          expect(l, f).not.toHaveProperty(f);
      }
      expect(res.body).not.toContain("internal note");
      expect(res.body).not.toContain("vip");
    });

    it("are absent, not null, from the detail view for a client without permissions", async () => {
      const res = await h.call(CLIENTS.basic, {
        method: "GET",
        url: `${LIST_URL}/${fx.location("L1")}?include=resources`,
      });
      expect(res.statusCode).toBe(200);
      const d = res.json() as Json;
      expectListFields(d);
      for (const f of [...RESTRICTED_LIST_FIELDS, ...RESTRICTED_DETAIL_FIELDS])
        expect(d, f).not.toHaveProperty(f);
      for (const f of DETAIL_ONLY_FIELDS) expect(d, f).toHaveProperty(f);
      expect(res.body).not.toContain("internal note");
      expect(res.body).not.toContain("vip");
    });
  });

  describe("tenancy (S12)", () => {
    const A_DATA = ["Lockers one", "#L1", "Street 1", "internal note", "vip", OP_A];

    /** A 404 for A's location must be indistinguishable from one for an id that never existed. */
    function expectSameNotFound(
      mine: LightMyRequestResponse,
      missing: LightMyRequestResponse,
      ids: string[],
    ) {
      const a = expectSpecError(mine, 404, "ERRORS.NOT_FOUND");
      const b = expectSpecError(missing, 404, "ERRORS.NOT_FOUND");
      const [idA, idB] = ids as [string, string];
      expect(String(a.error_message).replace(idA, "<id>")).toBe(String(b.error_message).replace(idB, "<id>"));
      expect(mine.headers["content-type"]).toBe(missing.headers["content-type"]);
      for (const s of A_DATA) expect(mine.body).not.toContain(s);
    }

    it("another operator's GET of A's location is a 404 like a non-existent id", async () => {
      const ghost = randomUUID();
      const mine = await h.call(CLIENTS.other, { method: "GET", url: `${LIST_URL}/${fx.location("L1")}` });
      const missing = await h.call(CLIENTS.other, { method: "GET", url: `${LIST_URL}/${ghost}` });
      expectSameNotFound(mine, missing, [fx.location("L1"), ghost]);
    });

    it("another operator's PATCH of A's location is a 404 like a non-existent id, and changes nothing", async () => {
      const ghost = randomUUID();
      const patch = { label: "taken over", comment: "owned" };
      const mine = await h.call(CLIENTS.other, {
        method: "PATCH",
        url: `${LIST_URL}/${fx.location("L1")}`,
        payload: patch,
      });
      const missing = await h.call(CLIENTS.other, {
        method: "PATCH",
        url: `${LIST_URL}/${ghost}`,
        payload: patch,
      });
      expectSameNotFound(mine, missing, [fx.location("L1"), ghost]);
      const after = await h.call(CLIENTS.admin, { method: "GET", url: `${LIST_URL}/${fx.location("L1")}` });
      expect(after.json()).toMatchObject({ label: "Lockers one", comment: "internal note" });
    });

    it("another operator's list never contains A's locations", async () => {
      for (const query of ["", "?lat_lng=52.37,4.89", "?tag=station", "?include=resources"]) {
        const body = await list(query, CLIENTS.other);
        expect(body.data.map((l) => l.code)).toEqual(query.includes("tag") ? [] : ["B1"]);
        for (const code of ["L1", "D1", "H1"]) expect(JSON.stringify(body)).not.toContain(fx.location(code));
      }
    });

    it("A's list never contains B's location", async () => {
      const body = await list("?lat_lng=52.0,5.0");
      expect(body.data.map((l) => l.code)).toEqual(["H1", "D1", "L1"]);
      expect(JSON.stringify(body)).not.toContain(fx.location("B1"));
    });
  });
});

describe("location aggregates over the API", () => {
  let h: CloudHarness;
  beforeEach(async () => {
    h = await startCloudHarness();
  });
  afterEach(() => h.close());

  const L1_LOCKERS = ["1", "2", "3", "4", "5"];
  const get = async (code: string, as: string = CLIENTS.admin) => {
    const res = await h.call(as, {
      method: "GET",
      url: `${LIST_URL}/${fx.location(code)}?include=resources`,
    });
    expect(res.statusCode, res.body).toBe(200);
    return res.json() as Loc;
  };
  const fromList = async (code: string) => {
    const res = await h.call(CLIENTS.admin, { method: "GET", url: LIST_URL });
    return byCode(res.json().data as Loc[], code);
  };
  const heartbeat = (gatewayId: string, location: string, aliases: string[]) =>
    h.heartbeat({
      gateway_id: gatewayId,
      sent_at: h.clock.now().toISOString(),
      devices: aliases.map((a) => ({ device_id: fx.device(location, a), reachable: true })),
    });
  const book = async (location: string, alias: string) => {
    const res = await h.call(CLIENTS.admin, {
      method: "POST",
      url: `/device/v1/devices/${fx.device(location, alias)}/commands`,
      payload: { command: "book" },
    });
    expect(res.statusCode, res.body).toBe(200);
  };

  it("counts locking devices only: not the GUARD, not the doors", async () => {
    expect((await get("L1")).devices).toMatchObject({ total: 5, online: 0, available: 0 });
    expect((await get("D1")).devices).toMatchObject({ total: 3 });
    expect((await get("H1")).devices).toMatchObject({ total: 1 });
    await heartbeat("gw-a3", "H1", ["door", "legacy-door", "1"]);
    const h1 = await get("H1");
    expect(h1.devices).toMatchObject({ total: 1, online: 1, available: 1 });
    expect(h1.connection).toBe("online");
  });

  it("is unknown with an empty offline_since before any device has been heard from", async () => {
    for (const code of ["L1", "D1", "H1"]) {
      expect(await get(code)).toMatchObject({ connection: "unknown", offline_since: "" });
    }
  });

  it("counts devices online and available after a heartbeat, and the location is online", async () => {
    await heartbeat("gw-a1", "L1", L1_LOCKERS);
    for (const l of [await get("L1"), await fromList("L1")]) {
      expect(l).toMatchObject({ connection: "online", offline_since: "" });
      expect(l.devices).toMatchObject({ total: 5, online: 5, available: 5 });
    }
    const resources = (await get("L1")).devices.resources ?? [];
    expect(resources.map((r) => [r.alias, (r.available as Json).value, (r.online as Json).value])).toEqual(
      L1_LOCKERS.map((a) => [a, true, true]),
    );
    expect(resources[0]!.online).toMatchObject({ last_updated: h.clock.now().toISOString() });
  });

  it("a booked locker is no longer available but still online", async () => {
    await heartbeat("gw-a1", "L1", L1_LOCKERS);
    await book("L1", "1");
    const l1 = await get("L1");
    expect(l1.devices).toMatchObject({ total: 5, online: 5, available: 4 });
    const r1 = l1.devices.resources?.find((r) => r.alias === "1");
    expect(r1).toMatchObject({ available: { value: false }, online: { value: true } });
  });

  it("a locked or faulty locker is not available", async () => {
    await heartbeat("gw-a1", "L1", L1_LOCKERS);
    const devices = deviceRepository(h.db);
    const locker = await devices.find(fx.device("L1", "2"));
    if (!locker) throw new Error("fixture locker L1/2 missing");
    const locked = await devices.compareAndSet(
      locker,
      { state: { ...locker.state, value: "LOCKED" } },
      h.clock.now(),
    );
    expect(locked).not.toBeNull();
    await devices.setHardwareState(fx.device("L1", "3"), "ERROR");
    expect((await get("L1")).devices).toMatchObject({ total: 5, online: 5, available: 3 });
  });

  it("an available locker that is not online does not count as available", async () => {
    await heartbeat("gw-a1", "L1", ["1", "2", "3"]);
    const l1 = await get("L1");
    expect(l1.devices).toMatchObject({ total: 5, online: 3, available: 3 });
    expect(l1).toMatchObject({ connection: "partially_online", offline_since: "" });
  });

  it("stays online while heartbeats are late but not yet dead", async () => {
    await heartbeat("gw-a1", "L1", L1_LOCKERS);
    h.clock.advance(20_000);
    expect(await get("L1")).toMatchObject({ connection: "online", devices: { online: 5, available: 5 } });
  });

  it("is partially online when some lockers went silent", async () => {
    await heartbeat("gw-a1", "L1", L1_LOCKERS);
    h.clock.advance(20_000);
    await heartbeat("gw-a1", "L1", ["1", "2"]);
    h.clock.advance(15_000); // lockers 3-5 silent for 35 s: dead
    const l1 = await get("L1");
    expect(l1).toMatchObject({ connection: "partially_online", offline_since: "" });
    expect(l1.devices).toMatchObject({ online: 2, available: 2 });
  });

  it("is offline when every device is dead, since the latest dead_since", async () => {
    const t0 = h.clock.now().getTime();
    await heartbeat("gw-a1", "L1", L1_LOCKERS);
    h.clock.advance(10_000);
    await heartbeat("gw-a1", "L1", ["1", "2"]);
    h.clock.advance(60_000);
    const latestDeath = new Date(t0 + 10_000 + 30_000).toISOString();
    for (const l of [await get("L1"), await fromList("L1")]) {
      expect(l).toMatchObject({ connection: "offline", offline_since: latestDeath });
      expect(l.devices).toMatchObject({ total: 5, online: 0, available: 0 });
    }
  });

  it("goes offline at once when the gateway's status says offline (Last Will)", async () => {
    await heartbeat("gw-a1", "L1", L1_LOCKERS);
    h.clock.advance(5_000);
    const at = h.clock.now().toISOString();
    await h.status({ gateway_id: "gw-a1", online: false, at });
    const l1 = await get("L1");
    expect(l1).toMatchObject({ connection: "offline", offline_since: at });
    expect(l1.devices).toMatchObject({ total: 5, online: 0, available: 0 });
    // Other locations are not affected.
    expect((await get("D1")).connection).toBe("unknown");
  });

  it("comes back online with the next heartbeat after an offline status", async () => {
    await heartbeat("gw-a1", "L1", L1_LOCKERS);
    await h.status({ gateway_id: "gw-a1", online: false, at: h.clock.now().toISOString() });
    h.clock.advance(5_000);
    await h.status({ gateway_id: "gw-a1", online: true, at: h.clock.now().toISOString() });
    await heartbeat("gw-a1", "L1", L1_LOCKERS);
    expect(await get("L1")).toMatchObject({
      connection: "online",
      offline_since: "",
      devices: { online: 5 },
    });
  });

  it("aggregates are the same for a client without permissions", async () => {
    await heartbeat("gw-a1", "L1", L1_LOCKERS);
    await book("L1", "4");
    const basic = await get("L1", CLIENTS.basic);
    expect(basic).toMatchObject({ connection: "online", devices: { total: 5, online: 5, available: 4 } });
  });
});
