import { describe, expect, it } from "vitest";
import type { DeviceType } from "../../shared/domain/device-types.ts";
import { aggregate } from "./aggregates.ts";

type Row = Parameters<typeof aggregate>[0][number];

const T0 = Date.parse("2026-01-15T10:00:00.000Z");
const at = (ms: number) => new Date(T0 + ms);
const iso = (ms: number) => at(ms).toISOString();
const CREATED = iso(-86_400_000);

/** A device row as the store holds it: an available locker never heard from, unless overridden. */
function aDevice(type: DeviceType = "LOCKER", override: (d: Row) => Partial<Row> = () => ({})): Row {
  const d: Row = {
    type,
    alias: type,
    state_value: type === "BIKE_HOUSE_DOOR" || type === "DOOR" ? "LOCKED" : "UNLOCKED",
    state_changed_at: CREATED,
    hardware_state: "NORMAL",
    last_seen_at: null,
    offline_at: null,
    created_at: CREATED,
  };
  return { ...d, ...override(d) };
}
/** Heard from `ms` after T0. */
const seen = (ms: number) => () => ({ last_seen_at: iso(ms) });

describe("location aggregates", () => {
  describe("counting", () => {
    it("an empty location counts nothing and its connection is unknown", () => {
      expect(aggregate([], at(0))).toEqual({
        total: 0,
        available: 0,
        online: 0,
        connection: "unknown",
        offline_since: "",
        resources: [],
      });
    });

    it("total counts locking devices only, never GUARDs, doors or rental devices", () => {
      const devices = (
        [
          "LOCKER",
          "BIKE_DOCK",
          "DOCK",
          "SCOOTER_DOCK",
          "DOCK_SESSIONLESS",
          "GUARD",
          "BIKE_HOUSE_DOOR",
          "DOOR",
          "BIKE_RENT",
          "SCOOTER_RENT",
        ] as const
      ).map((t) => aDevice(t, seen(0)));
      const agg = aggregate(devices, at(1_000));
      expect(agg.total).toBe(5);
      expect(agg.online).toBe(5);
      expect(agg.available).toBe(5);
      expect(agg.resources.map((r) => r.alias)).toEqual([
        "LOCKER",
        "BIKE_DOCK",
        "DOCK",
        "SCOOTER_DOCK",
        "DOCK_SESSIONLESS",
      ]);
    });

    it("online counts locking devices that are HEALTHY or UNHEALTHY, not DEAD or never heard from", () => {
      const devices = [
        aDevice("LOCKER", seen(0)), // 20 s late at now: UNHEALTHY, still online
        aDevice("LOCKER", seen(15_000)), // HEALTHY
        aDevice("LOCKER", seen(-20_000)), // 40 s silent: DEAD
        aDevice("LOCKER"), // never heard from
      ];
      const agg = aggregate(devices, at(20_000));
      expect(agg.total).toBe(4);
      expect(agg.online).toBe(2);
      expect(agg.available).toBe(2);
    });

    it("available needs the device UNLOCKED, with normal hardware, and online", () => {
      const devices = [
        aDevice("LOCKER", seen(0)),
        aDevice("LOCKER", () => ({ ...seen(0)(), state_value: "BOOKED" })),
        aDevice("LOCKER", () => ({ ...seen(0)(), state_value: "LOCKED" })),
        aDevice("LOCKER", () => ({ ...seen(0)(), state_value: "ALLOCATED" })),
        aDevice("LOCKER", () => ({ ...seen(0)(), state_value: "UNLOCKING" })),
        aDevice("LOCKER", () => ({ ...seen(0)(), hardware_state: "ERROR" })),
        aDevice("LOCKER", seen(-60_000)), // UNLOCKED but dead
        aDevice("LOCKER"), // UNLOCKED but never heard from
      ];
      const agg = aggregate(devices, at(1_000));
      expect(agg.total).toBe(8);
      expect(agg.online).toBe(6);
      expect(agg.available).toBe(1);
    });

    it("an explicit offline report (Last Will) takes a device out of online and available at once", () => {
      const devices = [aDevice("LOCKER", () => ({ last_seen_at: iso(0), offline_at: iso(1_000) }))];
      const agg = aggregate(devices, at(2_000));
      expect(agg).toMatchObject({ total: 1, online: 0, available: 0 });
    });
  });

  describe("resources", () => {
    it("lists each locking device with its availability and connectivity", () => {
      const devices = [
        aDevice("GUARD", () => ({ alias: "gw", last_seen_at: iso(0) })),
        aDevice("LOCKER", () => ({ alias: "1", last_seen_at: iso(0), state_changed_at: iso(-5_000) })),
        aDevice("LOCKER", () => ({
          alias: "2",
          last_seen_at: iso(0),
          state_value: "BOOKED",
          state_changed_at: iso(-1_000),
        })),
        aDevice("LOCKER", () => ({ alias: "3", last_seen_at: iso(-60_000) })),
        aDevice("LOCKER", () => ({ alias: "4" })),
        aDevice("BIKE_HOUSE_DOOR", () => ({ alias: "door", last_seen_at: iso(0) })),
      ];
      expect(aggregate(devices, at(1_000)).resources).toEqual([
        {
          alias: "1",
          available: { last_updated: iso(-5_000), value: true },
          online: { last_updated: iso(0), value: true },
        },
        {
          alias: "2",
          available: { last_updated: iso(-1_000), value: false },
          online: { last_updated: iso(0), value: true },
        },
        {
          alias: "3",
          available: { last_updated: CREATED, value: false },
          online: { last_updated: iso(-60_000), value: false },
        },
        {
          alias: "4",
          available: { last_updated: CREATED, value: false },
          online: { last_updated: CREATED, value: false },
        },
      ]);
    });
  });

  describe("connection and offline_since", () => {
    it("is unknown while no device has ever been heard from", () => {
      const agg = aggregate([aDevice("GUARD"), aDevice("LOCKER")], at(0));
      expect(agg.connection).toBe("unknown");
      expect(agg.offline_since).toBe("");
    });

    it("is online when every device, GUARD and doors included, communicates", () => {
      const devices = [
        aDevice("GUARD", seen(0)),
        aDevice("LOCKER", seen(0)),
        aDevice("BIKE_HOUSE_DOOR", seen(-20_000)), // UNHEALTHY still communicates
      ];
      const agg = aggregate(devices, at(1_000));
      expect(agg.connection).toBe("online");
      expect(agg.offline_since).toBe("");
    });

    it("is online even when every locking device is occupied", () => {
      const devices = [
        aDevice("GUARD", seen(0)),
        aDevice("LOCKER", () => ({ ...seen(0)(), state_value: "LOCKED" })),
      ];
      expect(aggregate(devices, at(0))).toMatchObject({ connection: "online", available: 0, online: 1 });
    });

    it("is partially_online when some devices communicate and others do not", () => {
      const devices = [
        aDevice("GUARD", seen(0)),
        aDevice("LOCKER", seen(0)),
        aDevice("LOCKER", seen(-60_000)),
      ];
      const agg = aggregate(devices, at(1_000));
      expect(agg.connection).toBe("partially_online");
      expect(agg.offline_since).toBe("");
    });

    it("is partially_online when only a door is down: connection looks at every device", () => {
      const devices = [aDevice("LOCKER", seen(0)), aDevice("DOOR", seen(-60_000))];
      const agg = aggregate(devices, at(1_000));
      expect(agg.total).toBe(1);
      expect(agg.online).toBe(1);
      expect(agg.connection).toBe("partially_online");
    });

    it("counts a device never heard from as not communicating", () => {
      const agg = aggregate([aDevice("GUARD", seen(0)), aDevice("LOCKER")], at(1_000));
      expect(agg.connection).toBe("partially_online");
    });

    it("is offline when no device communicates, offline since the latest dead_since", () => {
      const devices = [
        aDevice("GUARD", seen(10_000)), // dead since 40 s
        aDevice("LOCKER", seen(0)), // dead since 30 s
        aDevice("LOCKER", seen(5_000)), // dead since 35 s
      ];
      const agg = aggregate(devices, at(120_000));
      expect(agg.connection).toBe("offline");
      expect(agg.offline_since).toBe(iso(40_000));
    });

    it("stays offline with the same offline_since once the devices are LONG_DEAD", () => {
      const devices = [aDevice("GUARD", seen(0)), aDevice("LOCKER", seen(0))];
      const agg = aggregate(devices, at(3 * 60 * 60 * 1000));
      expect(agg.connection).toBe("offline");
      expect(agg.offline_since).toBe(iso(30_000));
    });

    it("is offline at once after the gateway's Last Will, since the moment it was reported", () => {
      const lastWill = () => ({ last_seen_at: iso(0), offline_at: iso(2_000) });
      const devices = [aDevice("GUARD", lastWill), aDevice("LOCKER", lastWill)];
      const agg = aggregate(devices, at(2_000));
      expect(agg.connection).toBe("offline");
      expect(agg.offline_since).toBe(iso(2_000));
      expect(agg).toMatchObject({ total: 1, online: 0, available: 0 });
    });

    it("is offline when every known device is dead and the rest were never heard from", () => {
      const devices = [aDevice("GUARD", seen(0)), aDevice("LOCKER")];
      const agg = aggregate(devices, at(60_000));
      expect(agg.connection).toBe("offline");
      expect(agg.offline_since).toBe(iso(30_000));
    });
  });
});
