import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  type DeclaredDevice,
  type DeclaredLocation,
  type FreshDevice,
  manifestRepository,
} from "../../../cloud/manifest/manifest-repository.ts";
import { openTestDb, type TestDb } from "../../support/test-db.ts";

const OP = "00000000-0000-4000-8000-0000000000a1";
const LOC = "00000000-0000-4000-8000-0000000000b1";
const LOC_2 = "00000000-0000-4000-8000-0000000000b2";
const DEV = "00000000-0000-4000-8000-0000000000c1";
const T0 = "2026-01-01T00:00:00.000Z";
const T1 = "2026-01-02T00:00:00.000Z";

const location = (over: Partial<DeclaredLocation> = {}): DeclaredLocation => ({
  id: LOC,
  operator_id: OP,
  code: "L1",
  label: "Location one",
  type: "BIKE_LOCKERS",
  status: "LAUNCHED",
  latitude: 52.5,
  longitude: 5.25,
  tags: ["a"],
  attrs: { operator_id: OP, address: "Street 1" },
  ...over,
});

const device = (over: Partial<DeclaredDevice> = {}): DeclaredDevice => ({
  id: DEV,
  operator_id: OP,
  location_id: LOC,
  gateway_id: "gw-1",
  type: "LOCKER",
  alias: "1",
  code: "",
  hardware_id: "",
  has_camera: false,
  power_save_strategy: "NONE",
  attrs: {
    tags: [],
    comment: "",
    has_otp_support: false,
    has_access_lists: false,
    has_subscription: false,
    price_list_id: null,
    deep_link: "",
    bus: { board: 1, channel: 1 },
  },
  ...over,
});

const FRESH: FreshDevice = { state_value: "UNLOCKED", lock_state: "UNLOCKED", reachable: false };

describe("manifest repository", () => {
  let store: TestDb;
  let repo: ReturnType<typeof manifestRepository>;
  beforeEach(async () => {
    store = await openTestDb();
    repo = manifestRepository(store.db);
  });
  afterEach(() => store.drop());

  /** The operator, location and gateway a device needs, as an apply writes them first. */
  async function site() {
    await repo.upsertOperator({ id: OP, name: "Operator" }, T0);
    await repo.upsertLocation(location(), T0);
    await repo.upsertGateway({ id: "gw-1", operator_id: OP, location_id: LOC, secret_hash: "scrypt$a" }, T0);
  }

  it("creates an operator, leaves it alone when unchanged and updates its name", async () => {
    expect(await repo.upsertOperator({ id: OP, name: "Operator" }, T0)).toBe("created");
    expect(await repo.upsertOperator({ id: OP, name: "Operator" }, T1)).toBe("unchanged");
    expect(await repo.upsertOperator({ id: OP, name: "Renamed" }, T1)).toBe("updated");
    const { operators } = await repo.stored();
    expect(operators).toEqual([{ id: OP, name: "Renamed", created_at: T0 }]);
  });

  it("upserts API clients with their permissions, and reads back a client's secret hash", async () => {
    await repo.upsertOperator({ id: OP, name: "Operator" }, T0);
    const client = { client_id: "c-1", operator_id: OP, name: "Client", secret_hash: "scrypt$1" };
    expect(await repo.clientSecretHash("c-1")).toBeUndefined();
    expect(await repo.upsertApiClient({ ...client, permissions: ["SUPERADMIN"] }, T0)).toBe("created");
    expect(await repo.upsertApiClient({ ...client, permissions: ["SUPERADMIN"] }, T1)).toBe("unchanged");
    expect(await repo.clientSecretHash("c-1")).toBe("scrypt$1");
    expect(await repo.upsertApiClient({ ...client, secret_hash: "scrypt$2", permissions: [] }, T1)).toBe(
      "updated",
    );
    expect(await repo.clientSecretHash("c-1")).toBe("scrypt$2");
    const { clients } = await repo.stored();
    expect(clients).toEqual([{ ...client, secret_hash: "scrypt$2", permissions: "[]", created_at: T0 }]);
  });

  it("upserts a location, touching updated_at only when a declared field changed", async () => {
    await repo.upsertOperator({ id: OP, name: "Operator" }, T0);
    expect(await repo.locationAttrs(LOC)).toBeUndefined();
    expect(await repo.upsertLocation(location(), T0)).toBe("created");
    expect(await repo.upsertLocation(location(), T1)).toBe("unchanged");
    expect((await repo.stored()).locations[0]).toMatchObject({ created_at: T0, updated_at: T0 });
    expect(await repo.locationAttrs(LOC)).toEqual({ operator_id: OP, address: "Street 1" });
    const attrs = { operator_id: OP, address: "Street 2" };
    expect(await repo.upsertLocation(location({ label: "Renamed", attrs }), T1)).toBe("updated");
    expect(await repo.locationAttrs(LOC)).toEqual(attrs);
    expect((await repo.stored()).locations).toEqual([
      expect.objectContaining({ id: LOC, label: "Renamed", tags: '["a"]', created_at: T0, updated_at: T1 }),
    ]);
  });

  it("creates a gateway never heard from, updates its secret, and reads the secret hash back", async () => {
    await repo.upsertOperator({ id: OP, name: "Operator" }, T0);
    await repo.upsertLocation(location(), T0);
    const gw = { id: "gw-1", operator_id: OP, location_id: LOC, secret_hash: "scrypt$a" };
    expect(await repo.gatewaySecretHash("gw-1")).toBeUndefined();
    expect(await repo.upsertGateway(gw, T0)).toBe("created");
    expect(await repo.upsertGateway(gw, T1)).toBe("unchanged");
    expect(await repo.upsertGateway({ ...gw, secret_hash: "scrypt$b" }, T1)).toBe("updated");
    expect(await repo.gatewaySecretHash("gw-1")).toBe("scrypt$b");
    expect((await repo.stored()).gateways).toEqual([
      expect.objectContaining({
        ...gw,
        secret_hash: "scrypt$b",
        online: null,
        status_at: null,
        created_at: T0,
      }),
    ]);
  });

  it("creates a device with its fresh runtime state and never rewrites that state on update", async () => {
    await site();
    expect(await repo.upsertDevice(device(), FRESH, T0)).toBe("created");
    const [created] = (await repo.stored()).devices;
    expect(created).toMatchObject({
      state_value: "UNLOCKED",
      state_changed_at: T0,
      lock_state: "UNLOCKED",
      hardware_state: "NORMAL",
      reachable: 0,
      has_camera: 0,
      user_id: null,
      version: 0,
      created_at: T0,
      updated_at: T0,
    });
    expect(JSON.parse(created?.attrs ?? "")).toMatchObject({ bus: { board: 1, channel: 1 } });
    const later: FreshDevice = { state_value: "LOCKED", lock_state: "LOCKED", reachable: true };
    expect(await repo.upsertDevice(device(), later, T1)).toBe("unchanged");
    expect(await repo.upsertDevice(device({ alias: "2", has_camera: true }), later, T1)).toBe("updated");
    expect((await repo.stored()).devices).toEqual([
      expect.objectContaining({
        alias: "2",
        has_camera: 1,
        state_value: "UNLOCKED",
        lock_state: "UNLOCKED",
        reachable: 0,
        created_at: T0,
        updated_at: T1,
      }),
    ]);
  });

  it("upserts public areas and links each location once, listing an area's locations in id order", async () => {
    await repo.upsertOperator({ id: OP, name: "Operator" }, T0);
    await repo.upsertLocation(location(), T0);
    await repo.upsertLocation(location({ id: LOC_2, code: "L2" }), T0);
    const area = { id: "city", operator_id: OP, name: "City" };
    expect(await repo.upsertPublicArea(area)).toBe("created");
    expect(await repo.upsertPublicArea(area)).toBe("unchanged");
    expect(await repo.upsertPublicArea({ ...area, name: "Town" })).toBe("updated");
    expect(await repo.publicAreaLocations("city")).toEqual([]);
    expect(await repo.linkPublicArea("city", LOC_2)).toBe(true);
    expect(await repo.linkPublicArea("city", LOC)).toBe(true);
    expect(await repo.linkPublicArea("city", LOC)).toBe(false);
    expect(await repo.publicAreaLocations("city")).toEqual([LOC, LOC_2]);
    expect(await repo.publicAreaLocations("elsewhere")).toEqual([]);
    const { publicAreas, areaLocations } = await repo.stored();
    expect(publicAreas).toEqual([{ ...area, name: "Town" }]);
    expect(areaLocations).toEqual([
      { public_area_id: "city", location_id: LOC },
      { public_area_id: "city", location_id: LOC_2 },
    ]);
  });

  it("holds nothing in a fresh store", async () => {
    expect(await repo.stored()).toEqual({
      operators: [],
      clients: [],
      locations: [],
      gateways: [],
      devices: [],
      publicAreas: [],
      areaLocations: [],
    });
  });
});
