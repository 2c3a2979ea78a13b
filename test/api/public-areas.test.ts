import type { LightMyRequestResponse } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CloudHarness, startCloudHarness } from "../support/cloud-harness.ts";
import { CLIENTS, fx, OP_A } from "../support/fixture-site.ts";

const CITY_A = "/location/v1/public-areas/city-a/locations";

/** Every field the spec marks restricted (Location), list and detail. */
const RESTRICTED = [
  "owner_id",
  "operator_id",
  "reseller_id",
  "distributor_id",
  "description",
  "comment",
  "private_tags",
  "has_maintenance_issues",
  "audit",
  "generation",
  "auto_restarts_enabled",
  "power_save_strategy",
  "analytics_dashboard_id",
];

type Json = Record<string, unknown>;
type Feature = {
  type: string;
  geometry: { type: string; coordinates: number[] };
  properties: Json & { code: string; parking: Json };
};

function expectSpecError(res: LightMyRequestResponse, status: number, code: string): Json {
  expect(res.statusCode, res.body).toBe(status);
  const body = res.json() as Json;
  expect(Object.keys(body).sort()).toEqual(["correlation_id", "error_code", "error_message", "status_code"]);
  expect(body).toMatchObject({ status_code: status, error_code: code });
  return body;
}

/** Every key at any depth of a JSON value. */
function allKeys(value: unknown, into: Set<string> = new Set()): Set<string> {
  if (Array.isArray(value)) for (const v of value) allKeys(v, into);
  else if (value && typeof value === "object") {
    for (const [k, v] of Object.entries(value)) {
      into.add(k);
      allKeys(v, into);
    }
  }
  return into;
}

describe("the public map of a public area", () => {
  let h: CloudHarness;
  beforeAll(async () => {
    h = await startCloudHarness();
  });
  afterAll(() => h.close());

  const features = async (url = CITY_A, as: string | null = null) => {
    const res = await h.call(as, { method: "GET", url });
    expect(res.statusCode, res.body).toBe(200);
    return (res.json() as { features: Feature[] }).features;
  };

  it("answers without any token with a GeoJSON FeatureCollection of the area's locations", async () => {
    const res = await h.call(null, { method: "GET", url: CITY_A });
    expect(res.statusCode).toBe(200);
    expect(res.headers["content-type"]).toMatch(/^application\/geo\+json\b/);
    const body = res.json() as { type: string; features: Feature[] };
    expect(Object.keys(body).sort()).toEqual(["features", "type"]);
    expect(body.type).toBe("FeatureCollection");
    expect(body.features.map((f) => f.properties.code)).toEqual(["D1", "L1"]);
    for (const f of body.features) {
      expect(f.type).toBe("Feature");
      expect(f.geometry.type).toBe("Point");
      expect(f.geometry.coordinates).toHaveLength(2);
    }
  });

  it("puts coordinates in GeoJSON order: [longitude, latitude]", async () => {
    const byCode = Object.fromEntries((await features()).map((f) => [f.properties.code, f]));
    expect(byCode.L1?.geometry.coordinates).toEqual([4.89, 52.37]);
    expect(byCode.D1?.geometry.coordinates).toEqual([4.88, 52.36]);
  });

  it("gives each feature the public properties, including the deprecated icon and renting", async () => {
    const l1 = (await features()).find((f) => f.properties.code === "L1");
    expect(l1?.properties).toEqual({
      code: "L1",
      address: "Street 1",
      name: "#L1 Lockers one",
      label: "Lockers one",
      tags: ["covered", "station"],
      parking: { total: 5, available: 0, online: 0 },
      icon: { png2x: expect.any(String), svg: expect.any(String), png: expect.any(String) },
      renting: { available_docks: 0, online_docks: 0, total_docks: 5, available_rentals: expect.any(Number) },
    });
    const d1 = (await features()).find((f) => f.properties.code === "D1");
    expect(d1?.properties).toMatchObject({ name: "#D1 Docks one", address: "", tags: ["station"] });
    expect(d1?.properties.parking).toEqual({ total: 3, available: 0, online: 0 });
  });

  it("S14: holds no restricted field anywhere, even when the caller has every permission", async () => {
    for (const as of [null, CLIENTS.admin]) {
      const res = await h.call(as, { method: "GET", url: CITY_A });
      expect(res.statusCode).toBe(200);
      const keys = allKeys(res.json());
      for (const f of RESTRICTED) expect(keys.has(f), f).toBe(false);
      expect(res.body).not.toContain("internal note");
      expect(res.body).not.toContain("vip");
      expect(res.body).not.toContain(OP_A);
      // No ids either: the map needs none, and they would open the authenticated routes to guessing.
      for (const code of ["L1", "D1"]) expect(res.body).not.toContain(fx.location(code));
    }
  });

  it("lists only the locations of that area", async () => {
    const codes = (await features()).map((f) => f.properties.code);
    expect(codes).not.toContain("H1");
    expect(codes).not.toContain("B1");
    expect(
      (await features("/location/v1/public-areas/b-area/locations")).map((f) => f.properties.code),
    ).toEqual(["B1"]);
  });

  it("ignores a bearer token: the route is public", async () => {
    expect((await features(CITY_A, CLIENTS.other)).map((f) => f.properties.code)).toEqual(["D1", "L1"]);
    const res = await h.app.inject({
      method: "GET",
      url: CITY_A,
      headers: { authorization: "Bearer not-a-token" },
    });
    expect(res.statusCode).toBe(200);
  });

  it("answers 404 with the spec body for an unknown public area", async () => {
    const res = await h.call(null, { method: "GET", url: "/location/v1/public-areas/nowhere/locations" });
    expectSpecError(res, 404, "ERRORS.NOT_FOUND");
  });

  it("counts parking from live device data: heartbeats and a booking show up", async () => {
    await h.heartbeat({
      gateway_id: "gw-a1",
      sent_at: h.clock.now().toISOString(),
      devices: ["1", "2", "3", "4", "5"].map((a) => ({ device_id: fx.device("L1", a), reachable: true })),
    });
    const book = await h.call(CLIENTS.admin, {
      method: "POST",
      url: `/device/v1/devices/${fx.device("L1", "2")}/commands`,
      payload: { command: "book" },
    });
    expect(book.statusCode, book.body).toBe(200);
    const l1 = (await features()).find((f) => f.properties.code === "L1");
    expect(l1?.properties.parking).toEqual({ total: 5, available: 4, online: 5 });
    expect(l1?.properties.renting).toMatchObject({ available_docks: 4, online_docks: 5, total_docks: 5 });
    h.clock.advance(60_000);
    const later = (await features()).find((f) => f.properties.code === "L1");
    expect(later?.properties.parking).toEqual({ total: 5, available: 0, online: 0 });
  });
});

describe("GET /location/v1/public-areas", () => {
  let h: CloudHarness;
  beforeAll(async () => {
    h = await startCloudHarness();
  });
  afterAll(() => h.close());

  it.each([
    ["with every permission", CLIENTS.admin],
    ["without permissions", CLIENTS.basic],
  ])("lists only the caller's own areas, for a client %s", async (_, client) => {
    const res = await h.call(client, { method: "GET", url: "/location/v1/public-areas" });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      data: [{ id: "city-a", name: "City A", uri: CITY_A }],
      uri: "/location/v1/public-areas",
    });
  });

  it("lists operator B's areas to operator B, never A's", async () => {
    const res = await h.call(CLIENTS.other, { method: "GET", url: "/location/v1/public-areas" });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      data: [{ id: "b-area", name: "B area", uri: "/location/v1/public-areas/b-area/locations" }],
      uri: "/location/v1/public-areas",
    });
    expect(res.body).not.toContain("city-a");
  });

  it("answers 401 with the spec body without a token", async () => {
    const res = await h.call(null, { method: "GET", url: "/location/v1/public-areas" });
    expectSpecError(res, 401, "ERRORS.UNAUTHORIZED");
    expect(res.headers["www-authenticate"]).toMatch(/^Bearer/);
  });
});
