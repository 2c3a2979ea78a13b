import { describe, expect, it } from "vitest";
import { LOCATION_TYPES } from "../api/location.ts";
import { DEVICE_TYPES } from "./device-types.ts";
import { locationHolds, misfitDevices } from "./location-devices.ts";

describe("which devices a location type holds", () => {
  it("puts lockers at BIKE_LOCKERS and bike docks (and their aliases) at BIKE_DOCKS, not the other way round", () => {
    expect(misfitDevices("BIKE_LOCKERS", ["LOCKER", "GUARD"])).toEqual([]);
    expect(misfitDevices("BIKE_DOCKS", ["BIKE_DOCK", "DOCK", "DOCK_SESSIONLESS", "GUARD"])).toEqual([]);
    expect(misfitDevices("BIKE_DOCKS", ["LOCKER", "BIKE_DOCK", "LOCKER"])).toEqual(["LOCKER"]);
    expect(misfitDevices("BIKE_LOCKERS", ["DOCK", "BIKE_DOCK"])).toEqual(["BIKE_DOCK", "DOCK"]);
  });

  it.each(["BIKE_HOUSE", "BIKE_HOUSE_DOCKLESS", "BIKE_HANGAR"] as const)(
    "lets a %s hold entrance doors, lockers and bike docks",
    (type) => {
      expect(misfitDevices(type, ["BIKE_HOUSE_DOOR", "DOOR", "LOCKER", "BIKE_DOCK", "DOCK"])).toEqual([]);
      expect(misfitDevices(type, ["SCOOTER_DOCK", "BIKE_RENT"])).toEqual(["BIKE_RENT", "SCOOTER_DOCK"]);
    },
  );

  it("keeps doors out of locations that are not bike houses", () => {
    for (const type of LOCATION_TYPES.filter((t) => !t.startsWith("BIKE_H"))) {
      expect(locationHolds(type, "BIKE_HOUSE_DOOR"), type).toBe(false);
      expect(locationHolds(type, "DOOR"), type).toBe(false);
    }
  });

  it("lets every location type hold a GUARD, and an empty location become any type", () => {
    for (const type of LOCATION_TYPES) {
      expect(locationHolds(type, "GUARD")).toBe(true);
      expect(misfitDevices(type, [])).toEqual([]);
    }
  });

  it("has a home for every device type", () => {
    for (const device of DEVICE_TYPES) {
      expect(
        LOCATION_TYPES.some((type) => locationHolds(type, device)),
        device,
      ).toBe(true);
    }
  });
});
