import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { locationRepository } from "../../../cloud/locations/location-repository.ts";
import { applyManifest, derivedId } from "../../../cloud/manifest/apply-manifest.ts";
import { SiteManifest } from "../../../cloud/manifest/manifest-schema.ts";
import { FakeClock } from "../../support/fake-clock.ts";
import { OP_A, OP_B } from "../../support/fixture-site.ts";
import { openTestDb, type TestDb } from "../../support/test-db.ts";

const loc = (code: string, latitude = 52.37) => ({
  code,
  label: `Location ${code}`,
  type: "BIKE_LOCKERS",
  latitude,
  longitude: 4.89,
  tags: [code.toLowerCase()],
});
const A = (code: string) => derivedId(OP_A, "location", code);
const B = (code: string) => derivedId(OP_B, "location", code);
const AT = "2026-02-01T00:00:00.000Z";

let store: TestDb;
let locations: ReturnType<typeof locationRepository>;

beforeEach(async () => {
  store = await openTestDb();
  const manifest = SiteManifest.parse({
    version: 1,
    operators: [
      {
        id: OP_A,
        name: "Operator A",
        public_areas: [
          { id: "city-a", name: "City A", locations: ["A2", "A1"] },
          { id: "area-0", name: "Area 0", locations: [] },
        ],
        locations: [loc("A2", 52.4), loc("A1"), loc("A3")],
      },
      { id: OP_B, name: "Operator B", locations: [loc("B1")] },
    ],
  });
  await applyManifest(store.db, manifest, new FakeClock(), {});
  locations = locationRepository(store.db);
});
afterEach(() => store.drop());

describe("locationRepository", () => {
  it("findOwned finds the operator's location, not another operator's", async () => {
    expect(await locations.findOwned(OP_A, A("A1"))).toMatchObject({
      code: "A1",
      operator_id: OP_A,
      tags: '["a1"]',
    });
    expect(await locations.findOwned(OP_B, A("A1"))).toBeUndefined();
    expect(await locations.findOwned(OP_A, B("B1"))).toBeUndefined();
  });

  it("heads lists the operator's locations by code with their versions; the filter's columns only when asked", async () => {
    const heads = await locations.heads(OP_A, false);
    expect(heads.map((h) => h.id)).toEqual([A("A1"), A("A2"), A("A3")]);
    for (const h of heads) {
      expect(h).toEqual({
        id: h.id,
        created_at: expect.any(String),
        data_version: expect.any(String),
        heartbeats: "0",
      });
      expect(BigInt(h.data_version)).toBeGreaterThanOrEqual(0n);
    }
    const filtered = await locations.heads(OP_A, true);
    expect(filtered[1]).toMatchObject({
      id: A("A2"),
      code: "A2",
      tags: '["a2"]',
      latitude: 52.4,
      longitude: 4.89,
    });
    expect((await locations.heads(OP_B, false)).map((h) => h.id)).toEqual([B("B1")]);
  });

  it("versioned reads the operator's locations among the ids, with version and heartbeat count", async () => {
    const rows = await locations.versioned(OP_A, [A("A1"), A("A3"), B("B1")]);
    expect(rows.map((r) => r.code).sort()).toEqual(["A1", "A3"]);
    const head = (await locations.heads(OP_A, false)).find((h) => h.id === A("A1"));
    expect(rows.find((r) => r.code === "A1")).toMatchObject({
      label: "Location A1",
      data_version: head?.data_version,
      heartbeats: "0",
    });
  });

  it("updateIfUnchanged writes while tags and attrs are as read, raising the version; not after they moved", async () => {
    const read = await locations.findOwned(OP_A, A("A1"));
    if (!read) throw new Error("fixture location missing");
    const before = (await locations.versioned(OP_A, [read.id]))[0]?.data_version ?? "";
    const change = { label: "Renamed", tags: '["x"]', attrs: read.attrs };
    expect(await locations.updateIfUnchanged(read, change, AT)).toBe(true);
    const after = await locations.versioned(OP_A, [read.id]);
    expect(after[0]).toMatchObject({ label: "Renamed", tags: '["x"]', updated_at: AT });
    expect(BigInt(after[0]?.data_version ?? "0")).toBeGreaterThan(BigInt(before));
    expect(await locations.updateIfUnchanged(read, { ...change, label: "Stale" }, AT)).toBe(false);
    expect(await locations.findOwned(OP_A, read.id)).toMatchObject({ label: "Renamed" });
    expect(await locations.updateIfUnchanged({ ...read, operator_id: OP_B, tags: '["x"]' }, change, AT)).toBe(
      false,
    );
  });

  it("public areas: the operator's by id, whether one exists, and the locations one shows by code", async () => {
    expect(await locations.publicAreasOf(OP_A)).toEqual([
      { id: "area-0", name: "Area 0" },
      { id: "city-a", name: "City A" },
    ]);
    expect(await locations.publicAreasOf(OP_B)).toEqual([]);
    expect(await locations.publicAreaExists("city-a")).toBe(true);
    expect(await locations.publicAreaExists("nowhere")).toBe(false);
    expect((await locations.inPublicArea("city-a")).map((l) => l.code)).toEqual(["A1", "A2"]);
    expect(await locations.inPublicArea("area-0")).toEqual([]);
  });
});
