import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CloudHarness, startCloudHarness } from "../support/cloud-harness.ts";
import { CLIENTS, fx, OP_A } from "../support/fixture-site.ts";

type OpenApi = { paths: Record<string, Record<string, unknown>> };

/** Every `uri` value anywhere in a JSON answer (`uri`, `devices.uri`, `data[].location.uri` …). */
function urisIn(value: unknown, found: Set<string>): Set<string> {
  if (Array.isArray(value)) for (const v of value) urisIn(v, found);
  else if (value && typeof value === "object") {
    for (const [k, v] of Object.entries(value)) {
      if (k === "uri" && typeof v === "string") found.add(v);
      else urisIn(v, found);
    }
  }
  return found;
}

const LOCATIONS = ["L1", "D1", "H1"].map(fx.location);
const DEVICES = [
  ...["1", "2", "3", "4", "5"].map((a) => fx.device("L1", a)),
  ...["1", "2", "3"].map((a) => fx.device("D1", a)),
  ...["door", "legacy-door", "1"].map((a) => fx.device("H1", a)),
  ...["gw-a1", "gw-a2", "gw-a3"].map(fx.guard),
];

/** Fixture values for the path parameters of GET routes; routes with others are reached through links. */
function fill(path: string, commandId: string): string[] {
  const values: Record<string, string[]> = {
    id: LOCATIONS,
    location_id: LOCATIONS,
    device_id: DEVICES,
    command_id: [commandId],
    public_area_id: ["city-a"],
  };
  let urls = [path];
  for (const [, name] of path.matchAll(/\{([^}]+)\}/g)) {
    const options = values[name as string];
    if (!options) return [];
    urls = urls.flatMap((u) => options.map((v) => u.replace(`{${name}}`, v)));
  }
  return urls;
}

/**
 * Every `uri` the API emits resolves (issue 8): starting from every GET route of the OpenAPI document on the
 * fixture site (with include=resources where a route takes it), every `uri` in every answer is fetched with
 * the same token and must answer 200, and what it answers is walked in turn.
 */
describe.each([
  ["a client with every permission", CLIENTS.admin],
  ["a client without permissions", CLIENTS.basic],
])("every uri the API emits to %s resolves", (_who, client) => {
  let h: CloudHarness;
  let seeds: string[];
  beforeAll(async () => {
    h = await startCloudHarness();
    // A command, so the command route and its device link are walked too.
    const posted = await h.call(client, {
      method: "POST",
      url: `/device/v1/devices/${fx.device("L1", "1")}/commands`,
      payload: { command: "lock" },
    });
    expect(posted.statusCode, posted.body).toBe(200);
    const doc = (await h.app.inject({ method: "GET", url: "/openapi.json" })).json() as OpenApi;
    const gets = Object.entries(doc.paths)
      .filter(([, ops]) => "get" in ops)
      .map(([p]) => p);
    seeds = gets.flatMap((p) => fill(p, posted.json().id));
    seeds = [
      ...seeds,
      ...seeds.filter((u) => u.startsWith("/location/v1/locations")).map((u) => `${u}?include=resources`),
    ];
  });
  afterAll(() => h.close());

  it("walks the GET routes and follows every uri, each answering 200", async () => {
    const seen = new Map<string, number>();
    const queue: { url: string; from: string }[] = [];
    const emitted = new Set<string>();
    for (const url of seeds) {
      const res = await h.call(client, { method: "GET", url });
      // A seed may need a query or a rider's token (sessions): only its links matter here.
      if (res.statusCode !== 200) continue;
      for (const uri of urisIn(res.json(), new Set())) queue.push({ url: uri, from: url });
    }
    while (queue.length > 0) {
      const { url, from } = queue.shift() as { url: string; from: string };
      emitted.add(url);
      if (seen.has(url)) continue;
      const res = await h.call(client, { method: "GET", url });
      seen.set(url, res.statusCode);
      expect(res.statusCode, `${url} (linked from ${from}): ${res.body}`).toBe(200);
      for (const uri of urisIn(res.json(), new Set())) queue.push({ url: uri, from: url });
    }
    // The walk reached every kind of link the location and device resources carry.
    const kinds = [...emitted].map((u) => u.replace(/[0-9a-f-]{36}/g, "{id}"));
    for (const kind of [
      "/location/v1/locations",
      "/location/v1/locations/{id}",
      "/device/v1/locations/{id}/devices",
      "/device/v1/devices/{id}",
      "/device/v1/commands/{id}",
      "/location/v1/locations/{id}/rental-devices",
      "/location/v1/locations/{id}/subscriptions",
      "/location/v1/locations/{id}/descriptions",
      "/location/v1/locations/{id}/external-devices",
      "/location/v1/locations/{id}/organizations",
      "/whitelist/v1/locations/{id}/whitelists",
      "/location/v1/price-lists/{id}",
      "/location/v1/public-areas",
      "/location/v1/public-areas/city-a/locations",
    ])
      expect(kinds, kind).toContain(kind);
    // The audit link is restricted: only a client with RESTRICTED_FIELDS is given one.
    expect(kinds.includes("/location/v1/locations/{id}/audit")).toBe(client === CLIENTS.admin);
  });
});

describe("the linked location resources", () => {
  let h: CloudHarness;
  beforeAll(async () => {
    h = await startCloudHarness();
  });
  afterAll(() => h.close());
  const L1 = fx.location("L1");
  const get = (client: string, url: string) => h.call(client, { method: "GET", url });

  it("answers another operator's location, or an unknown one, 404 like the location itself", async () => {
    for (const sub of [
      "subscriptions",
      "descriptions",
      "external-devices",
      "rental-devices",
      "organizations",
      "audit",
    ]) {
      for (const id of [fx.location("B1"), "7d0c2b6e-1f4a-4c3b-9e8d-5a6f7b8c9d01", "not-a-uuid"]) {
        const res = await get(CLIENTS.admin, `/location/v1/locations/${id}/${sub}`);
        expect(res.statusCode, `${sub} of ${id}`).toBe(404);
        expect(res.json().error_code).toBe("ERRORS.NOT_FOUND");
      }
    }
  });

  it("lists the organisations only to a client that may read their ids", async () => {
    const patched = await h.call(CLIENTS.admin, {
      method: "PATCH",
      url: `/location/v1/locations/${L1}`,
      payload: { owner_id: "org-owner", reseller_id: "org-reseller" },
    });
    expect(patched.statusCode, patched.body).toBe(204);
    const uri = `/location/v1/locations/${L1}/organizations`;
    expect((await get(CLIENTS.admin, uri)).json()).toEqual({
      data: [
        { id: "org-owner", role: "owner" },
        { id: OP_A, role: "operator" },
        { id: "org-reseller", role: "reseller" },
      ],
      uri,
    });
    expect((await get(CLIENTS.basic, uri)).json()).toEqual({ data: [], uri });
  });

  it("gives the audit record to RESTRICTED_FIELDS only, and 403 otherwise", async () => {
    const uri = `/location/v1/locations/${L1}/audit`;
    const res = await get(CLIENTS.admin, uri);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ uri, created_at: expect.any(String), updated_at: expect.any(String) });
    const refused = await get(CLIENTS.basic, uri);
    expect(refused.statusCode).toBe(403);
    expect(refused.json().error_code).toBe("ERRORS.FORBIDDEN");
  });

  it("lists no whitelists where none targets the location, for any location id, without a 404 (the spec's whitelist row has none)", async () => {
    for (const id of [L1, fx.location("B1"), "not-a-uuid"]) {
      const uri = `/whitelist/v1/locations/${id}/whitelists`;
      const res = await get(CLIENTS.admin, uri);
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ data: [], uri });
    }
  });

  it("lists rental devices in the device shape (none at the fixture site)", async () => {
    const uri = `/location/v1/locations/${L1}/rental-devices`;
    expect((await get(CLIENTS.admin, uri)).json()).toEqual({ data: [], uri });
  });
});
