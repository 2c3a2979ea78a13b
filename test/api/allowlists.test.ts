import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { applyManifest } from "../../cloud/manifest/apply-manifest.ts";
import { findProblems } from "../../cloud/manifest/manifest-problems.ts";
import { type ManifestInput, SiteManifest } from "../../cloud/manifest/manifest-schema.ts";
import { Device } from "../../shared/api/device.ts";
import { LocationDetail, LocationList } from "../../shared/api/location.ts";
import { type CloudHarness, fixtureSecretHash, startCloudHarness } from "../support/cloud-harness.ts";
import { CLIENTS, fixtureManifest, fx, OP_A } from "../support/fixture-site.ts";

/**
 * `allowlisted` / `allowlist_ids` (location) and `has_allowlist` (device) follow the whitelists that target
 * the location or its devices (docs/decisions/locations.md), on both stores.
 */

const STAFF = "a11a11a1-0000-4000-8000-000000000001";
const CLEANERS = "a11a11a1-0000-4000-8000-000000000002";
const L1 = fx.location("L1");
const H1 = fx.location("H1");
const D1 = fx.location("D1");
const L1_LOCKERS = ["1", "2", "3", "4", "5"].map((a) => fx.device("L1", a));
const DOOR = fx.device("H1", "door");
const H1_LOCKER = fx.device("H1", "1");

let h: CloudHarness;
beforeEach(async () => {
  h = await startCloudHarness();
  await declare([
    { id: STAFF, name: "Staff" },
    { id: CLEANERS, name: "Cleaners" },
  ]);
});
afterEach(() => h.close());

type ListInput = NonNullable<ManifestInput["operators"][number]["whitelists"]>;

function declare(whitelists: ListInput) {
  return applyManifest(
    h.db,
    SiteManifest.parse({ version: 1, operators: [{ id: OP_A, name: "Operator A", whitelists }] }),
    h.clock,
  );
}

async function get(url: string, as = CLIENTS.basic) {
  const res = await h.call(as, { method: "GET", url });
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as unknown;
}

/** Each location of the list (served from the kept views) as `code: allowlisted`. */
async function listed(): Promise<Record<string, boolean>> {
  const list = LocationList.parse(await get("/location/v1/locations"));
  return Object.fromEntries(list.data.map((l) => [l.code, l.allowlisted]));
}

async function detail(id: string) {
  const d = LocationDetail.parse(await get(`/location/v1/locations/${id}`));
  return { allowlisted: d.allowlisted, allowlist_ids: d.allowlist_ids };
}

function hasAllowlist(ids: string[]): Promise<boolean[]> {
  return Promise.all(
    ids.map(async (id) => Device.parse(await get(`/device/v1/devices/${id}`)).has_allowlist),
  );
}

async function listedDevices(locationId: string): Promise<Record<string, boolean>> {
  const body = (await get(`/device/v1/locations/${locationId}/devices`)) as { data: unknown[] };
  return Object.fromEntries(body.data.map((d) => Device.parse(d)).map((d) => [d.id, d.has_allowlist]));
}

async function targets(list: string, operation: "ADD" | "REMOVE", items: { id: string; type: string }[]) {
  const res = await h.call(CLIENTS.admin, {
    method: "POST",
    url: `/whitelist/v1/whitelists/${list}/targets`,
    payload: {
      operation,
      targets: items.map((t) => ({
        ...t,
        uri: t.type === "device" ? `/device/v1/devices/${t.id}` : `/location/v1/locations/${t.id}`,
      })),
    },
  });
  expect(res.statusCode, res.body).toBe(204);
}

describe("allowlists follow the whitelists' targets", () => {
  it("start empty: no location allowlisted, no device with an allowlist", async () => {
    expect(await listed()).toEqual({ L1: false, D1: false, H1: false });
    expect(await detail(L1)).toEqual({ allowlisted: false, allowlist_ids: [] });
    expect(await hasAllowlist([...L1_LOCKERS, DOOR])).toEqual(L1_LOCKERS.map(() => false).concat(false));
  });

  it("a location target makes the location allowlisted and every device there has_allowlist", async () => {
    expect(await listed()).toEqual({ L1: false, D1: false, H1: false }); // views made before the change
    await targets(STAFF, "ADD", [{ id: L1, type: "location" }]);
    expect(await listed()).toEqual({ L1: true, D1: false, H1: false });
    expect(await detail(L1)).toEqual({ allowlisted: true, allowlist_ids: [STAFF] });
    expect(await hasAllowlist(L1_LOCKERS)).toEqual(L1_LOCKERS.map(() => true));
    // Its GUARD too: the location's cards are the ones the gateway lets in.
    expect(Object.values(await listedDevices(L1))).toEqual(
      [...L1_LOCKERS, fx.guard("gw-a1")].map(() => true),
    );
    expect(await hasAllowlist([DOOR])).toEqual([false]);

    await targets(STAFF, "REMOVE", [{ id: L1, type: "location" }]);
    expect(await listed()).toEqual({ L1: false, D1: false, H1: false });
    expect(await detail(L1)).toEqual({ allowlisted: false, allowlist_ids: [] });
    expect(await hasAllowlist(L1_LOCKERS)).toEqual(L1_LOCKERS.map(() => false));
  });

  it("a device target makes its location allowlisted (ids active in the location) and only it has_allowlist", async () => {
    await listed();
    await targets(CLEANERS, "ADD", [{ id: DOOR, type: "device" }]);
    await targets(STAFF, "ADD", [{ id: H1, type: "location" }]);
    expect(await listed()).toEqual({ L1: false, D1: false, H1: true });
    expect(await detail(H1)).toEqual({ allowlisted: true, allowlist_ids: [STAFF, CLEANERS].sort() });
    expect(await listedDevices(H1)).toMatchObject({ [DOOR]: true, [H1_LOCKER]: true });

    // Without the location target only the door keeps one; the location still has the door's list.
    await targets(STAFF, "REMOVE", [{ id: H1, type: "location" }]);
    expect(await listedDevices(H1)).toMatchObject({ [DOOR]: true, [H1_LOCKER]: false });
    expect(await detail(H1)).toEqual({ allowlisted: true, allowlist_ids: [CLEANERS] });
    expect((await listed()).H1).toBe(true);
    await targets(CLEANERS, "REMOVE", [{ id: DOOR, type: "device" }]);
    expect((await listed()).H1).toBe(false);
  });

  it("targets declared in the site manifest count the same; a change of keys_only alone changes nothing shown", async () => {
    await listed();
    const withStaff = async (keysOnly: boolean) => {
      const manifest = fixtureManifest(await fixtureSecretHash());
      const a = manifest.operators.find((o) => o.id === OP_A);
      if (!a) throw new Error("no operator A in the fixture");
      a.whitelists = [{ id: STAFF, name: "Staff", keys_only: keysOnly, targets: [{ location: "D1" }] }];
      await applyManifest(h.db, SiteManifest.parse(manifest), h.clock);
    };
    await withStaff(true);
    expect(await listed()).toEqual({ L1: false, D1: true, H1: false });
    expect(await detail(D1)).toEqual({ allowlisted: true, allowlist_ids: [STAFF] });
    await withStaff(false);
    expect(await detail(D1)).toEqual({ allowlisted: true, allowlist_ids: [STAFF] });
    expect(await listed()).toEqual({ L1: false, D1: true, H1: false });
  });

  it("a manifest that sets them is refused with the reason, not silently ignored", () => {
    const { problems } = findProblems({
      version: 1,
      operators: [
        {
          id: OP_A,
          name: "Operator A",
          locations: [
            {
              code: "X1",
              label: "X",
              type: "BIKE_LOCKERS",
              latitude: 52,
              longitude: 4,
              attrs: { allowlisted: true, allowlist_ids: [STAFF] },
              gateways: [
                {
                  id: "gw-x1",
                  secret: "a-long-secret",
                  devices: [{ alias: "1", type: "LOCKER", has_allowlist: true }],
                },
              ],
            },
          ],
        },
      ],
    });
    const derived = "derived from the whitelists that target the";
    expect(problems.map((p) => [p.path.join("."), p.message])).toEqual([
      ["operators.0.locations.0.attrs.allowlisted", expect.stringContaining(`not settable: ${derived}`)],
      ["operators.0.locations.0.attrs.allowlist_ids", expect.stringContaining(`not settable: ${derived}`)],
      [
        "operators.0.locations.0.gateways.0.devices.0.has_allowlist",
        expect.stringContaining(`not settable: ${derived}`),
      ],
    ]);
  });
});
