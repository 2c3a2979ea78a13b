import { readFileSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { applyManifest, checkManifest, derivedId } from "../../cloud/manifest/apply-manifest.ts";
import { loadManifest } from "../../cloud/manifest/load-manifest.ts";
import { manifestJsonSchema, SiteManifest } from "../../cloud/manifest/manifest-schema.ts";
import { fixtureSecretHash } from "../support/cloud-harness.ts";
import { FakeClock } from "../support/fake-clock.ts";
import { fixtureManifest, fx, OP_A } from "../support/fixture-site.ts";
import { openTestDb, type TestDb } from "../support/test-db.ts";

const root = path.resolve(import.meta.dirname, "../..");
const DEMO = path.join(root, "manifests/demo-site.yaml");
const env = { DEMO_CLIENT_SECRET: "demo-secret-1", DEMO_GATEWAY_SECRET: "demo-gateway-secret" };

async function snapshot(store: TestDb) {
  const db = store.db;
  return {
    operators: await db.selectFrom("operators").selectAll().orderBy("id").execute(),
    clients: await db.selectFrom("api_clients").selectAll().orderBy("client_id").execute(),
    locations: await db.selectFrom("locations").selectAll().orderBy("id").execute(),
    gateways: await db.selectFrom("gateways").selectAll().orderBy("id").execute(),
    devices: await db.selectFrom("devices").selectAll().orderBy("id").execute(),
    areas: await db.selectFrom("public_area_locations").selectAll().orderBy("location_id").execute(),
  };
}

describe("the site manifest", () => {
  let store: TestDb;
  const clock = new FakeClock();
  beforeEach(async () => {
    store = await openTestDb();
  });
  afterEach(() => store.drop());

  it("applies the demo site with every location type and a public area", async () => {
    const summary = await applyManifest(store.db, loadManifest(DEMO), clock, env);
    expect(summary.created).toBeGreaterThan(20);
    const types = (await store.db.selectFrom("locations").select("type").execute()).map((r) => r.type).sort();
    expect(types).toEqual(["BIKE_DOCKS", "BIKE_HOUSE", "BIKE_HOUSE_DOCKLESS", "BIKE_LOCKERS"]);
    const area = await store.db
      .selectFrom("public_area_locations")
      .selectAll()
      .where("public_area_id", "=", "demo-city")
      .execute();
    expect(area).toHaveLength(4);
  });

  it("stores secrets only as hashes", async () => {
    await applyManifest(store.db, loadManifest(DEMO), clock, env);
    const clients = await store.db.selectFrom("api_clients").select("secret_hash").execute();
    const gateways = await store.db.selectFrom("gateways").select("secret_hash").execute();
    for (const row of [...clients, ...gateways]) {
      expect(row.secret_hash).toMatch(/^scrypt\$/);
      expect(row.secret_hash).not.toContain("demo-secret-1");
      expect(row.secret_hash).not.toContain("demo-gateway-secret");
    }
  });

  it("stores ids given in upper case in lower case, as the API's paths normalise them", async () => {
    const ids = {
      operator: "ABCDEF00-0000-4000-8000-00000000000A",
      location: "ABCDEF00-0000-4000-8000-00000000000B",
      guard: "ABCDEF00-0000-4000-8000-00000000000C",
      device: "ABCDEF00-0000-4000-8000-00000000000D",
    };
    const manifest = SiteManifest.parse({
      version: 1,
      operators: [
        {
          id: ids.operator,
          name: "Upper",
          locations: [
            {
              id: ids.location,
              code: "U1",
              label: "Upper one",
              type: "BIKE_LOCKERS",
              latitude: 52,
              longitude: 5,
              gateways: [
                {
                  id: "gw-upper",
                  guard_id: ids.guard,
                  secret: "gateway-secret-1",
                  devices: [{ id: ids.device, alias: "1", type: "LOCKER" }],
                },
              ],
            },
          ],
        },
      ],
    });
    await applyManifest(store.db, manifest, clock);
    const devices = await store.db
      .selectFrom("devices")
      .select(["id", "location_id", "operator_id"])
      .execute();
    expect(devices.map((d) => d.id).sort()).toEqual(
      [ids.device.toLowerCase(), ids.guard.toLowerCase()].sort(),
    );
    for (const d of devices) {
      expect(d.location_id).toBe(ids.location.toLowerCase());
      expect(d.operator_id).toBe(ids.operator.toLowerCase());
    }
  });

  it("is idempotent: applying twice changes nothing", async () => {
    const m = loadManifest(DEMO);
    await applyManifest(store.db, m, clock, env);
    const before = await snapshot(store);
    clock.advance(60_000);
    const second = await applyManifest(store.db, m, clock, env);
    expect(second).toEqual({ created: 0, updated: 0 });
    expect(await snapshot(store)).toEqual(before);
  });

  it("keeps a device's runtime state when re-applied", async () => {
    const m = SiteManifest.parse(fixtureManifest(await fixtureSecretHash()));
    await applyManifest(store.db, m, clock);
    const id = fx.device("L1", "1");
    await store.db
      .updateTable("devices")
      .set({ state_value: "LOCKED", user_id: "u1" })
      .where("id", "=", id)
      .execute();
    await applyManifest(store.db, m, clock);
    const row = await store.db
      .selectFrom("devices")
      .selectAll()
      .where("id", "=", id)
      .executeTakeFirstOrThrow();
    expect(row).toMatchObject({ state_value: "LOCKED", user_id: "u1" });
  });

  it("leaves location fields the manifest does not mention as they were", async () => {
    const m = SiteManifest.parse(fixtureManifest(await fixtureSecretHash()));
    await applyManifest(store.db, m, clock);
    const id = fx.location("L1");
    const row = await store.db
      .selectFrom("locations")
      .select("attrs")
      .where("id", "=", id)
      .executeTakeFirstOrThrow();
    const patched = { ...JSON.parse(row.attrs), city: "Patched City" };
    await store.db
      .updateTable("locations")
      .set({ attrs: JSON.stringify(patched) })
      .where("id", "=", id)
      .execute();
    await applyManifest(store.db, m, clock);
    const after = await store.db
      .selectFrom("locations")
      .select("attrs")
      .where("id", "=", id)
      .executeTakeFirstOrThrow();
    expect(JSON.parse(after.attrs)).toMatchObject({
      city: "Patched City",
      address: "Street 1",
      operator_id: OP_A,
    });
  });

  it("derives stable ids from operator, code and alias", () => {
    expect(fx.location("L1")).toBe(derivedId(OP_A, "location", "L1"));
    expect(derivedId(OP_A, "location", "L1")).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("names the path of every schema problem", () => {
    const bad = {
      version: 1,
      operators: [{ id: "not-a-uuid", name: "", locations: [{ code: "X", colour: "red" }] }],
    };
    const res = SiteManifest.safeParse(bad);
    expect(res.success).toBe(false);
    const paths = res.error?.issues.map((i) => i.path.join(".")) ?? [];
    expect(paths).toContain("operators.0.id");
    expect(paths).toContain("operators.0.locations.0");
  });

  it("reports duplicates and dangling references across the manifest", async () => {
    const m = SiteManifest.parse(fixtureManifest(await fixtureSecretHash()));
    const opA = m.operators[0]!;
    opA.locations.push({ ...opA.locations[0]!, gateways: [] });
    opA.public_areas[0]!.locations.push("NOPE");
    const problems = checkManifest(m);
    expect(problems).toContain("operators[0].locations[3].code: duplicate L1");
    expect(problems).toContain("operators[0].public_areas[0].locations: no location with code NOPE");
    await expect(applyManifest(store.db, m, clock)).rejects.toThrow(/duplicate L1/);
    expect(await store.db.selectFrom("locations").selectAll().execute()).toHaveLength(0);
  });

  it("fails when a secret_env variable is missing, naming it", async () => {
    await expect(applyManifest(store.db, loadManifest(DEMO), clock, {})).rejects.toThrow(
      /DEMO_CLIENT_SECRET is not set/,
    );
  });

  it("publishes a JSON Schema that matches the zod schema", () => {
    const published = JSON.parse(readFileSync(path.join(root, "docs/site-manifest.schema.json"), "utf8"));
    expect(published).toEqual(manifestJsonSchema());
  });
});
