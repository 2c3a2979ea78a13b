import fc from "fast-check";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Principal } from "../../cloud/auth/principal.ts";
import { deviceRepository } from "../../cloud/devices/device-repository.ts";
import { aggregate } from "../../cloud/locations/aggregates.ts";
import { type LocationRecord, locationRepository } from "../../cloud/locations/location-repository.ts";
import { pickLocations } from "../../cloud/locations/location-service.ts";
import { presentLocation } from "../../cloud/locations/present-location.ts";
import { applyManifest } from "../../cloud/manifest/apply-manifest.ts";
import { SiteManifest } from "../../cloud/manifest/manifest-schema.ts";
import { type Db, openDb } from "../../cloud/store/db.ts";
import { whitelistRepository } from "../../cloud/whitelists/whitelist-repository.ts";
import { HARDWARE_STATES, type HardwareState } from "../../shared/api/device.ts";
import { LocationList } from "../../shared/api/location.ts";
import { PERMISSIONS } from "../../shared/api/permissions.ts";
import { DEAD_AFTER_MS, LONG_DEAD_AFTER_MS, UNHEALTHY_AFTER_MS } from "../../shared/domain/health.ts";
import { type CloudHarness, startCloudHarness } from "../support/cloud-harness.ts";
import { CLIENTS, fx, OP_A } from "../support/fixture-site.ts";
import { openReplicaDb } from "../support/test-db.ts";

const LIST_URL = "/location/v1/locations";

/** The operator A gateways and the devices each drives, as the fixture declares them. */
const GATEWAYS = {
  "gw-a1": ["1", "2", "3", "4", "5"].map((a) => fx.device("L1", a)),
  "gw-a2": ["1", "2", "3"].map((a) => fx.device("D1", a)),
  "gw-a3": ["door", "legacy-door", "1"].map((a) => fx.device("H1", a)),
} as const;
type GatewayId = keyof typeof GATEWAYS;
const GATEWAY_IDS = Object.keys(GATEWAYS) as GatewayId[];
const LOCKERS = [...GATEWAYS["gw-a1"], GATEWAYS["gw-a3"][2]] as string[];
const LOCATIONS = ["L1", "D1", "H1"] as const;
/** Two whitelists of operator A (declared in beforeAll) and what they may target. */
const LISTS = ["f1f1f1f1-0000-4000-8000-0000000000a1", "f1f1f1f1-0000-4000-8000-0000000000a2"] as const;
const TARGETS: { type: "location" | "device"; id: string }[] = [
  ...LOCATIONS.map((code) => ({ type: "location" as const, id: fx.location(code) })),
  ...[fx.device("L1", "1"), fx.device("D1", "2"), fx.device("H1", "door")].map((id) => ({
    type: "device" as const,
    id,
  })),
];

type Query = { as: "admin" | "basic"; include: boolean; tag?: string; near?: boolean };

const principals: Record<Query["as"], Principal> = {
  admin: { kind: "client", id: CLIENTS.admin, operatorId: OP_A, permissions: new Set(PERMISSIONS) },
  basic: { kind: "client", id: CLIENTS.basic, operatorId: OP_A, permissions: new Set() },
};
const NEAR = { lat: 52.37, lng: 4.89, radiusM: 50_000 };

function urlOf(q: Query): string {
  const params = new URLSearchParams();
  if (q.include) params.set("include", "resources");
  if (q.tag) params.set("tag", q.tag);
  if (q.near) {
    params.set("lat_lng", `${NEAR.lat},${NEAR.lng}`);
    params.set("radius", String(NEAR.radiusM));
  }
  const s = params.toString();
  return s ? `${LIST_URL}?${s}` : LIST_URL;
}

/** The list as computed before any caching: every row and device read now, presented now. */
async function fromScratch(h: CloudHarness, q: Query): Promise<unknown> {
  const principal = principals[q.as];
  const locations = locationRepository(h.db);
  const rows: LocationRecord[] = [];
  for (const head of await locations.heads(OP_A, false)) {
    const row = await locations.findOwned(OP_A, head.id);
    if (row) rows.push(row);
  }
  const picked = pickLocations(rows, { tags: q.tag ? [q.tag] : [], ...(q.near ? { near: NEAR } : {}) });
  const summaries = await deviceRepository(h.db).summariesAt(
    picked.map((r) => r.id),
    OP_A,
  );
  // Active whitelists the plain way: every target of the operator's lists, each device's location.
  const lists = whitelistRepository(h.db);
  const targets = (
    await Promise.all((await lists.listForOperator(OP_A)).map((l) => lists.targets(l.id)))
  ).flat();
  const deviceLocations = new Map<string, string>();
  for (const row of picked)
    for (const d of await deviceRepository(h.db).listAtLocation(OP_A, row.id))
      deviceLocations.set(d.id, row.id);
  const allowlistIds = (locationId: string) =>
    [
      ...new Set(
        targets
          .filter((t) =>
            t.target_type === "location"
              ? t.target_id === locationId
              : deviceLocations.get(t.target_id) === locationId,
          )
          .map((t) => t.whitelist_id),
      ),
    ].sort();
  const now = h.clock.now();
  return {
    data: picked.map((row) =>
      presentLocation({
        row,
        agg: aggregate(summaries.get(row.id) ?? [], now),
        allowlistIds: allowlistIds(row.id),
        principal,
        includeResources: q.include,
      }),
    ),
    uri: LIST_URL,
  };
}

type Action =
  | { kind: "advance"; ms: number }
  | { kind: "heartbeat"; gw: GatewayId; reachable: boolean[] }
  | { kind: "status"; gw: GatewayId; online: boolean }
  | { kind: "sensed"; locker: number; locked: boolean }
  | { kind: "patch"; location: number; label: string }
  | { kind: "elsewhere"; locker: number; hardware: number }
  /** A whitelist target added or removed through the API (SUPERADMIN), or past the app. */
  | { kind: "target"; list: number; target: number; add: boolean; past: boolean };

/** Clock moves that land on the health thresholds, around them, and back in time. */
const moves = fc.oneof(
  fc.constantFrom(UNHEALTHY_AFTER_MS, DEAD_AFTER_MS, LONG_DEAD_AFTER_MS, 1, -1, 0),
  fc.integer({ min: -60_000, max: 3 * LONG_DEAD_AFTER_MS }),
  fc.integer({ min: 0, max: 40_000 }),
);

const actions: fc.Arbitrary<Action> = fc.oneof(
  moves.map((ms) => ({ kind: "advance" as const, ms })),
  fc.record({
    kind: fc.constant("heartbeat" as const),
    gw: fc.constantFrom(...GATEWAY_IDS),
    reachable: fc.array(fc.boolean(), { minLength: 5, maxLength: 5 }),
  }),
  fc.record({
    kind: fc.constant("status" as const),
    gw: fc.constantFrom(...GATEWAY_IDS),
    online: fc.boolean(),
  }),
  fc.record({
    kind: fc.constant("sensed" as const),
    locker: fc.nat(LOCKERS.length - 1),
    locked: fc.boolean(),
  }),
  fc.record({
    kind: fc.constant("patch" as const),
    location: fc.nat(LOCATIONS.length - 1),
    // A label must hold something besides spaces (the PATCH schema's rule).
    label: fc.string({ minLength: 1, maxLength: 10 }).filter((l) => /\S/.test(l)),
  }),
  fc.record({
    kind: fc.constant("elsewhere" as const),
    locker: fc.nat(LOCKERS.length - 1),
    hardware: fc.nat(HARDWARE_STATES.length - 1),
  }),
  fc.record({
    kind: fc.constant("target" as const),
    list: fc.nat(LISTS.length - 1),
    target: fc.nat(TARGETS.length - 1),
    add: fc.boolean(),
    past: fc.boolean(),
  }),
);

const queries: fc.Arbitrary<Query> = fc.record(
  {
    as: fc.constantFrom("admin" as const, "basic" as const),
    include: fc.boolean(),
    tag: fc.constantFrom("station", "covered"),
    near: fc.boolean(),
  },
  { requiredKeys: ["as", "include"] },
);

describe("location list views", () => {
  let h: CloudHarness;
  /**
   * Writes made past the app, as another replica or the manifest CLI makes them: the views hold no
   * in-process invalidation, so they can learn of these only from the store.
   */
  const elsewhere = {
    get db() {
      return h.db;
    },
  };
  let seq = 0;
  /** The last body and ETag each query was answered with. */
  const seen = new Map<string, { etag: string; body: unknown }>();

  beforeAll(async () => {
    h = await startCloudHarness();
    await applyManifest(
      h.db,
      SiteManifest.parse({
        version: 1,
        operators: [
          {
            id: OP_A,
            name: "Operator A",
            whitelists: LISTS.map((id, i) => ({ id, name: `List ${i}` })),
          },
        ],
      }),
      h.clock,
    );
  });
  afterAll(async () => {
    await h.close();
  });

  async function apply(a: Action) {
    const now = h.clock.now().toISOString();
    switch (a.kind) {
      case "advance":
        h.clock.advance(a.ms);
        return;
      case "heartbeat":
        await h.heartbeat({
          gateway_id: a.gw,
          sent_at: now,
          devices: GATEWAYS[a.gw].map((device_id, i) => ({ device_id, reachable: a.reachable[i] ?? true })),
        });
        return;
      case "status":
        await h.status({ gateway_id: a.gw, online: a.online, at: now });
        return;
      case "sensed": {
        const device_id = LOCKERS[a.locker] as string;
        const gw = GATEWAY_IDS.find((g) => (GATEWAYS[g] as readonly string[]).includes(device_id)) as string;
        await h.report(gw, {
          type: "device_state",
          gateway_id: gw,
          seq: ++seq,
          observed_at: now,
          device_id,
          lock_state: a.locked ? "LOCKED" : "UNLOCKED",
        });
        return;
      }
      case "patch": {
        const token = await tokenFor(CLIENTS.admin);
        const res = await h.app.inject({
          method: "PATCH",
          headers: { authorization: `Bearer ${token}` },
          url: `${LIST_URL}/${fx.location(LOCATIONS[a.location] as string)}`,
          payload: { label: a.label },
        });
        expect(res.statusCode, res.body).toBe(204);
        return;
      }
      case "elsewhere":
        await deviceRepository(elsewhere.db).setHardwareState(
          LOCKERS[a.locker] as string,
          HARDWARE_STATES[a.hardware] as HardwareState,
        );
        return;
      case "target": {
        const list = LISTS[a.list] as string;
        const t = TARGETS[a.target] as (typeof TARGETS)[number];
        if (a.past) {
          const key = { whitelistId: list, type: t.type, id: t.id };
          const past = whitelistRepository(elsewhere.db);
          if (!a.add) await past.removeTarget(key);
          else if (!(await past.findTarget(key))) await past.insertTarget(key, 1, now);
          return;
        }
        const token = await tokenFor(CLIENTS.admin);
        const uri = t.type === "device" ? `/device/v1/devices/${t.id}` : `${LIST_URL}/${t.id}`;
        const res = await h.app.inject({
          method: "POST",
          headers: { authorization: `Bearer ${token}` },
          url: `/whitelist/v1/whitelists/${list}/targets`,
          payload: { operation: a.add ? "ADD" : "REMOVE", targets: [{ id: t.id, type: t.type, uri }] },
        });
        expect(res.statusCode, res.body).toBe(204);
        return;
      }
    }
  }

  const tokens = new Map<string, { token: string; at: number }>();
  /** A token issued within the last half hour of the clock, which moves hours and back. */
  async function tokenFor(clientId: string): Promise<string> {
    const now = h.clock.now().getTime();
    const held = tokens.get(clientId);
    if (held && now >= held.at && now - held.at < 30 * 60_000) return held.token;
    const token = await h.freshToken(clientId);
    tokens.set(clientId, { token, at: now });
    return token;
  }

  async function get(as: Query["as"], url: string, headers: Record<string, string> = {}) {
    const token = await tokenFor(CLIENTS[as]);
    return h.app.inject({ method: "GET", url, headers: { ...headers, authorization: `Bearer ${token}` } });
  }

  /** Asks as a client would, then again with the ETag it got: the answers must be the scratch list's. */
  async function check(q: Query) {
    const url = urlOf(q);
    const res = await get(q.as, url);
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body).toEqual(await fromScratch(h, q));
    // Nothing the response schema would drop or change is in the prepared bytes.
    expect(LocationList.parse(body)).toEqual(body);
    const etag = res.headers.etag as string;
    expect(etag).toMatch(/^"[A-Za-z0-9_-]+"$/);

    const key = `${q.as}|${url}`;
    const before = seen.get(key);
    if (before) {
      const again = await get(q.as, url, { "if-none-match": before.etag });
      // A 304 only when the list is what that ETag named; otherwise the new list.
      if (JSON.stringify(before.body) === JSON.stringify(body)) {
        expect(again.statusCode).toBe(304);
        expect(again.body).toBe("");
      } else {
        expect(again.statusCode).toBe(200);
        expect(again.json()).toEqual(body);
      }
    }
    seen.set(key, { etag, body });
  }

  it("equals a from-scratch list after any writes, by anyone, and any clock moves", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(actions, queries), { minLength: 1, maxLength: 10 }),
        async (steps) => {
          for (const [action, query] of steps) {
            await apply(action);
            await check(query);
          }
        },
      ),
      { numRuns: 60 },
    );
  });

  it("never shows a device online once it has gone dead, to a caller who asked a moment before", async () => {
    // The property above moves the clock back and forth, so it may leave an offline status stamped up to a
    // few seconds ahead of now, which would make the devices dead before DEAD_AFTER_MS. An hour on, all it
    // left lies in the past and only this test's heartbeat decides.
    h.clock.advance(60 * 60_000);
    const now = () => h.clock.now().toISOString();
    await h.heartbeat({
      gateway_id: "gw-a1",
      sent_at: now(),
      devices: GATEWAYS["gw-a1"].map((device_id) => ({ device_id, reachable: true })),
    });
    const online = async () => {
      const res = await get("admin", `${LIST_URL}?tag=covered`);
      return (res.json() as { data: { devices: { online: number } }[] }).data[0]?.devices.online;
    };
    expect(await online()).toBe(5);
    h.clock.advance(DEAD_AFTER_MS - 1);
    expect(await online()).toBe(5);
    h.clock.advance(1);
    expect(await online()).toBe(0);
    // A heartbeat that reaches the same devices writes no device row: it alone must bring them back.
    await h.heartbeat({
      gateway_id: "gw-a1",
      sent_at: now(),
      devices: GATEWAYS["gw-a1"].map((device_id) => ({ device_id, reachable: true })),
    });
    expect(await online()).toBe(5);
  });

  it("answers 304 to a matching If-None-Match, weak or in a list, and 200 once anything changed", async () => {
    const first = await get("basic", LIST_URL);
    const etag = first.headers.etag as string;
    for (const header of [etag, `W/${etag}`, `"other", ${etag}`, "*"]) {
      const res = await get("basic", LIST_URL, { "if-none-match": header });
      expect(res.statusCode, header).toBe(304);
      expect(res.headers.etag).toBe(etag);
      // No body, and no length of one: a client on a keep-alive connection would wait for it.
      expect(res.body).toBe("");
      expect(res.headers["content-length"]).toBeUndefined();
    }
    const located = locationRepository(elsewhere.db);
    const d1 = await located.findOwned(OP_A, fx.location("D1"));
    if (!d1) throw new Error("fixture location D1 missing");
    const renamed = { label: "Renamed elsewhere", tags: d1.tags, attrs: d1.attrs };
    expect(await located.updateIfUnchanged(d1, renamed, d1.updated_at)).toBe(true);
    const after = await get("basic", LIST_URL, { "if-none-match": etag });
    expect(after.statusCode).toBe(200);
    expect(after.headers.etag).not.toBe(etag);
    expect((after.json() as { data: { label: string }[] }).data.map((l) => l.label)).toContain(
      "Renamed elsewhere",
    );
  });

  it("sees at once a write another connection to the store commits (another process or replica)", async () => {
    const before = await get("basic", LIST_URL);
    const etag = before.headers.etag as string;
    expect((await get("basic", LIST_URL, { "if-none-match": etag })).statusCode).toBe(304);
    // SQLite: a second handle on the same file, as the manifest CLI opens it; PostgreSQL: a replica's.
    let other: { db: Db; close(): Promise<void> };
    if (h.store.kind === "postgres") {
      const replica = await openReplicaDb(h.store);
      other = { db: replica.db, close: replica.drop };
    } else {
      const { file } = await sql<{ file: string }>`select file from pragma_database_list where name = 'main'`
        .execute(h.db)
        .then((r) => r.rows[0] as { file: string });
      const db = await openDb({ kind: "sqlite", file });
      other = { db, close: () => db.destroy() };
    }
    try {
      await other.db
        .updateTable("locations")
        .set({ label: "Renamed by another connection" })
        .where("id", "=", fx.location("L1"))
        .execute();
    } finally {
      await other.close();
    }
    const after = await get("basic", LIST_URL, { "if-none-match": etag });
    expect(after.statusCode).toBe(200);
    expect((after.json() as { data: { label: string }[] }).data.map((l) => l.label)).toContain(
      "Renamed by another connection",
    );
  });
});
