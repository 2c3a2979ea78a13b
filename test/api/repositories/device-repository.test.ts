import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { deviceRepository } from "../../../cloud/devices/device-repository.ts";
import { gatewayRepository } from "../../../cloud/gateway-link/gateway-repository.ts";
import type { DeviceRecord } from "../../../cloud/store/device-record.ts";
import { toJson } from "../../../cloud/store/json-column.ts";
import { fx, OP_A, OP_B } from "../../support/fixture-site.ts";
import type { TestDb } from "../../support/test-db.ts";
import { openFixtureStore } from "./fixture-store.ts";

const T0 = "2026-01-15T10:00:00.000Z";
const at = (m: number) => new Date(Date.UTC(2026, 0, 15, 10, m)).toISOString();
const L1 = fx.location("L1");
const D1 = fx.location("D1");
const H1 = fx.location("H1");
const B1 = fx.location("B1");
const UNKNOWN = "00000000-0000-4000-8000-000000000000";
const locker = (alias: string) => fx.device("L1", alias);

describe("device repository", () => {
  let store: TestDb;
  beforeAll(async () => {
    store = await openFixtureStore();
  });
  afterAll(() => store.drop());
  const repo = () => deviceRepository(store.db);
  const read = async (id: string): Promise<DeviceRecord> => {
    const device = await repo().find(id);
    if (!device) throw new Error(`device ${id} missing`);
    return device;
  };

  it("finds a device as the services see it, and nothing for an unknown one", async () => {
    expect(await repo().find(locker("2"))).toMatchObject({
      id: locker("2"),
      operator_id: OP_A,
      location_id: L1,
      gateway_id: "gw-a1",
      type: "LOCKER",
      alias: "2",
      version: 0,
      state: { value: "UNLOCKED", changed_at: T0, timeout_at: null, restore: null },
      lock_state: "UNLOCKED",
      hardware_state: "NORMAL",
      has_camera: false,
      door_open: null,
      item_present: null,
      last_seen_at: null,
      attrs: { bus: { board: 1, channel: 2 }, price_list_id: fx.priceList("standard") },
    });
    expect(await repo().find(fx.guard("gw-a1"))).toMatchObject({ type: "GUARD", has_camera: true });
    expect((await repo().find(fx.device("H1", "door")))?.state.value).toBe("LOCKED");
    expect(await repo().find(UNKNOWN)).toBeUndefined();
  });

  it("finds the operator's device only: another operator's is as missing as an unknown one", async () => {
    expect(await repo().findForOperator(OP_A, locker("2"))).toEqual(await repo().find(locker("2")));
    expect((await repo().findForOperator(OP_B, fx.device("B1", "1")))?.id).toBe(fx.device("B1", "1"));
    expect(await repo().findForOperator(OP_B, locker("2"))).toBeUndefined();
    expect(await repo().findForOperator(OP_A, fx.device("B1", "1"))).toBeUndefined();
    expect(await repo().findForOperator(OP_A, UNKNOWN)).toBeUndefined();
  });

  it("lists the operator's devices at a location by alias, the GUARD among them", async () => {
    const atL1 = await repo().listAtLocation(OP_A, L1);
    expect(atL1.map((d) => d.alias)).toEqual(["1", "2", "3", "4", "5", "gw-a1"]);
    expect(atL1[1]).toEqual(await repo().find(locker("2")));
    expect((await repo().listAtLocation(OP_A, H1)).map((d) => d.alias)).toEqual([
      "1",
      "door",
      "gw-a3",
      "legacy-door",
    ]);
    expect(await repo().listAtLocation(OP_B, L1)).toEqual([]);
    expect(await repo().listAtLocation(OP_A, B1)).toEqual([]);
    expect(await repo().listAtLocation(OP_A, UNKNOWN)).toEqual([]);
  });

  it("tells whether a gateway drives a device", async () => {
    expect(await repo().isDrivenBy("gw-a1", locker("2"))).toBe(true);
    expect(await repo().isDrivenBy("gw-a1", fx.guard("gw-a1"))).toBe(true);
    expect(await repo().isDrivenBy("gw-a2", locker("2"))).toBe(false);
    expect(await repo().isDrivenBy("gw-b1", locker("2"))).toBe(false);
    expect(await repo().isDrivenBy("gw-a1", UNKNOWN)).toBe(false);
    expect(await repo().isDrivenBy("gw-none", locker("2"))).toBe(false);
  });

  it("gives a gateway's wiring in id order, its GUARD off the bus", async () => {
    const wiring = await repo().wiringOf("gw-a1");
    const ids = [...["1", "2", "3", "4", "5"].map(locker), fx.guard("gw-a1")].sort();
    expect(wiring.map((w) => w.device_id)).toEqual(ids);
    expect(wiring.find((w) => w.device_id === locker("4"))).toEqual({
      device_id: locker("4"),
      type: "LOCKER",
      alias: "4",
      bus: { board: 1, channel: 4 },
      has_camera: false,
      power_save_strategy: "REMOTE_WAKEUP",
    });
    expect(wiring.find((w) => w.device_id === fx.guard("gw-a1"))).toMatchObject({
      type: "GUARD",
      bus: null,
      has_camera: true,
      power_save_strategy: "NONE",
    });
    expect((await repo().wiringOf("gw-b1")).map((w) => w.alias).sort()).toEqual(["1", "gw-b1"]);
    expect(await repo().wiringOf("gw-none")).toEqual([]);
  });

  it("gives the device types at a location, each once", async () => {
    expect((await repo().typesAt(D1)).sort()).toEqual(["BIKE_DOCK", "DOCK", "DOCK_SESSIONLESS", "GUARD"]);
    expect((await repo().typesAt(L1)).sort()).toEqual(["GUARD", "LOCKER"]);
    expect(await repo().typesAt(UNKNOWN)).toEqual([]);
  });

  it("summarises the devices of locations by location and alias, the same with the operator's hint", async () => {
    expect(await repo().summariesAt([])).toEqual(new Map());
    expect(await repo().summariesAt([], OP_A)).toEqual(new Map());
    const one = await repo().summariesAt([L1]);
    expect([...one.keys()]).toEqual([L1]);
    expect(one.get(L1)?.map((s) => s.alias)).toEqual(["1", "2", "3", "4", "5", "gw-a1"]);
    expect(one.get(L1)?.[1]).toEqual({
      location_id: L1,
      type: "LOCKER",
      alias: "2",
      state_value: "UNLOCKED",
      state_changed_at: T0,
      hardware_state: "NORMAL",
      offline_at: null,
      created_at: T0,
      last_seen_at: null,
    });
    const plain = await repo().summariesAt([L1, H1]);
    expect(plain.get(H1)?.map((s) => s.alias)).toEqual(["1", "door", "gw-a3", "legacy-door"]);
    // The hint reads the operator's devices in one scan: only those of the locations asked for come back.
    const hinted = await repo().summariesAt([L1, H1], OP_A);
    expect(new Set(hinted.keys())).toEqual(new Set([L1, H1]));
    expect(hinted.get(L1)).toEqual(plain.get(L1));
    expect(hinted.get(H1)).toEqual(plain.get(H1));
    expect((await repo().summariesAt([L1], OP_A)).get(L1)).toEqual(one.get(L1));
    expect([...(await repo().summariesAt([L1, B1], OP_A)).keys()]).toEqual([L1]);
    expect(await repo().summariesAt([UNKNOWN, fx.location("Z9")], OP_A)).toEqual(new Map());
  });

  it("writes a change and bumps the version when nobody wrote the device since it was read", async () => {
    const before = await read(locker("2"));
    const state = {
      value: "ALLOCATED" as const,
      changed_at: at(1),
      timeout_at: at(2),
      restore: { value: "UNLOCKED" as const, timeout_at: null },
    };
    const written = await repo().compareAndSet(
      before,
      { state, command_id: UNKNOWN, door_open: false, item_present: true, user_id: "rider-1" },
      new Date(at(1)),
    );
    expect(written).toMatchObject({
      state,
      command_id: UNKNOWN,
      door_open: false,
      item_present: true,
      user_id: "rider-1",
      version: 1,
      updated_at: at(1),
    });
    expect(await repo().find(locker("2"))).toEqual(written);
    // Another device is untouched.
    expect((await read(locker("3"))).version).toBe(0);
  });

  it("refuses a change from a stale read: the writer that came first wins", async () => {
    const stale = await read(locker("2"));
    const first = await repo().compareAndSet(stale, { booked_by: "first" }, new Date(at(3)));
    expect(first?.version).toBe(stale.version + 1);
    expect(await repo().compareAndSet(stale, { booked_by: "second" }, new Date(at(4)))).toBeNull();
    expect(await repo().find(locker("2"))).toEqual(first);
    const gone = { ...stale, id: UNKNOWN };
    expect(await repo().compareAndSet(gone, { booked_by: "nobody" }, new Date(at(5)))).toBeNull();
  });

  it("lets exactly one of two writers racing from the same read win", async () => {
    const read3 = await read(locker("3"));
    const results = await Promise.all(
      ["a", "b"].map((who) => repo().compareAndSet(read3, { booked_by: who }, new Date(at(6)))),
    );
    const winners = results.filter((r): r is DeviceRecord => r !== null);
    expect(winners).toHaveLength(1);
    expect(await repo().find(locker("3"))).toEqual(winners[0]);
  });

  it("writes through a transaction's executor: rolled back with it, kept when it commits", async () => {
    const before = await read(locker("3"));
    await expect(
      store.db.transaction().execute(async (trx) => {
        const written = await deviceRepository(trx).compareAndSet(
          before,
          { booked_by: "rolled-back" },
          new Date(at(7)),
        );
        expect(written?.booked_by).toBe("rolled-back");
        throw new Error("abort");
      }),
    ).rejects.toThrow("abort");
    expect(await repo().find(locker("3"))).toEqual(before);
    const kept = await store.db
      .transaction()
      .execute((trx) => deviceRepository(trx).compareAndSet(before, { booked_by: "kept" }, new Date(at(8))));
    expect(await repo().find(locker("3"))).toEqual(kept);
  });

  it("records a reading as it comes, without a version or a date of settings", async () => {
    const dock = fx.device("D1", "1");
    const before = await read(dock);
    await repo().recordReading(dock, {
      lock_state: "LOCKED",
      door_open: true,
      item_present: false,
      sensors_at: at(10),
      sleep_state: "LIGHT_SLEEP",
    });
    expect(await repo().find(dock)).toEqual({
      ...before,
      lock_state: "LOCKED",
      door_open: true,
      item_present: false,
      sensors_at: at(10),
      sleep_state: "LIGHT_SLEEP",
    });
    await repo().recordReading(dock, { door_open: null });
    expect((await read(dock)).door_open).toBeNull();
    expect((await read(dock)).item_present).toBe(false);
    await repo().recordReading(UNKNOWN, { door_open: true });
    expect(await repo().find(UNKNOWN)).toBeUndefined();
  });

  it("records a reading only over the version it was reconciled with, bumping it but not updated_at", async () => {
    const dock = fx.device("D1", "2");
    const before = await read(dock);
    const sensor_marks = toJson({ source: "gw-a2:ob-1", seq: { door_open: 4 } });
    expect(await repo().recordReadingIf(before, { door_open: true, sensors_at: at(11), sensor_marks })).toBe(
      true,
    );
    const after = await read(dock);
    expect(after).toEqual({
      ...before,
      door_open: true,
      sensors_at: at(11),
      sensor_marks,
      version: before.version + 1,
    });
    expect(await repo().recordReadingIf(before, { door_open: false })).toBe(false);
    expect(await repo().find(dock)).toEqual(after);
    const inTrx = await store.db
      .transaction()
      .execute((trx) => deviceRepository(trx).recordReadingIf(after, { item_present: true }));
    expect(inTrx).toBe(true);
    expect(await repo().find(dock)).toMatchObject({ item_present: true, version: after.version + 1 });
  });

  it("notes the gateway's GUARD seen, back from offline, and no other device", async () => {
    await repo().markOffline("gw-a3", at(12));
    const h1 = await repo().listAtLocation(OP_A, H1);
    expect(h1.map((d) => d.offline_at)).toEqual([at(12), at(12), at(12), at(12)]);
    expect((await read(fx.guard("gw-a1"))).offline_at).toBeNull();
    await repo().markGuardSeen("gw-a3", at(13));
    expect(await repo().find(fx.guard("gw-a3"))).toMatchObject({ last_seen_at: at(13), offline_at: null });
    expect(await repo().find(fx.device("H1", "door"))).toMatchObject({
      last_seen_at: null,
      offline_at: at(12),
    });
    expect((await read(fx.guard("gw-a1"))).last_seen_at).toBeNull();
  });

  it("flips the reachability of the bus devices a heartbeat changed, keeping when one was last seen", async () => {
    const gateways = gatewayRepository(store.db);
    const [one, door, legacy] = [
      fx.device("H1", "1"),
      fx.device("H1", "door"),
      fx.device("H1", "legacy-door"),
    ];
    const seen = async () =>
      Object.fromEntries(
        (await repo().listAtLocation(OP_A, H1)).map((d) => [d.alias, d.last_seen_at] as const),
      );
    await repo().markReachable("gw-a3", [one, door]);
    await gateways.setHeartbeatAt("gw-a3", at(20));
    expect(await seen()).toEqual({ "1": at(20), door: at(20), "gw-a3": at(20), "legacy-door": null });
    // The door is no longer reached: it was last seen at the heartbeat before.
    await repo().markReachable("gw-a3", [one, legacy]);
    await gateways.setHeartbeatAt("gw-a3", at(21));
    expect(await seen()).toEqual({ "1": at(21), door: at(20), "gw-a3": at(21), "legacy-door": at(21) });
    // Nothing reached: every bus device keeps its last sighting, the GUARD is the gateway itself.
    await repo().markReachable("gw-a3", []);
    await gateways.setHeartbeatAt("gw-a3", at(22));
    expect(await seen()).toEqual({ "1": at(21), door: at(20), "gw-a3": at(22), "legacy-door": at(21) });
    // Another gateway's devices are not its to mark.
    await repo().markReachable("gw-a3", [locker("1")]);
    expect((await read(locker("1"))).last_seen_at).toBeNull();
  });

  it("has not seen a device that drops out before its gateway's first heartbeat", async () => {
    const b = fx.device("B1", "1");
    await repo().markReachable("gw-b1", [b]);
    await repo().markReachable("gw-b1", []);
    expect((await read(b)).last_seen_at).toBeNull();
    await gatewayRepository(store.db).setHeartbeatAt("gw-b1", at(24));
    expect((await read(b)).last_seen_at).toBeNull();
    expect((await read(fx.guard("gw-b1"))).last_seen_at).toBe(at(24));
  });

  it("sets a device's hardware condition, that device's only", async () => {
    const b = fx.device("B1", "1");
    await repo().setHardwareState(b, "DISABLED");
    expect((await read(b)).hardware_state).toBe("DISABLED");
    expect((await read(fx.guard("gw-b1"))).hardware_state).toBe("NORMAL");
    await repo().setHardwareState(b, "NORMAL");
    expect((await read(b)).hardware_state).toBe("NORMAL");
    await repo().setHardwareState(UNKNOWN, "DISABLED");
  });

  it("offers the devices whose state ran out with no command driving them, up to the limit", async () => {
    const timed = async (alias: string, timeout_at: string, command_id: string | null) =>
      repo().compareAndSet(
        await read(locker(alias)),
        { state: { value: "BOOKED", changed_at: at(40), timeout_at, restore: null }, command_id },
        new Date(at(40)),
      );
    expect(await repo().idsPastDeadline(at(60), 10)).not.toContain(locker("4"));
    await timed("4", at(45), null);
    await timed("5", at(50), null);
    await timed("1", at(45), UNKNOWN);
    expect(await repo().idsPastDeadline(at(44), 10)).toEqual([]);
    expect(await repo().idsPastDeadline(at(45), 10)).toEqual([locker("4")]);
    expect((await repo().idsPastDeadline(at(50), 10)).sort()).toEqual([locker("4"), locker("5")].sort());
    expect(await repo().idsPastDeadline(at(50), 1)).toHaveLength(1);
  });
});
