import type { LocationType } from "../api/location.ts";
import type { DeviceType } from "./device-types.ts";

const DOCKS: readonly DeviceType[] = ["BIKE_DOCK", "DOCK", "DOCK_SESSIONLESS"];
const DOORS: readonly DeviceType[] = ["BIKE_HOUSE_DOOR", "DOOR"];
const BIKE_HOUSE: readonly DeviceType[] = [...DOORS, "LOCKER", ...DOCKS];

/**
 * The device types each location type holds besides its GUARDs (a gateway fits anywhere). Spec rules:
 * lockers at BIKE_LOCKERS and bike docks (DOCK is an alias) at BIKE_DOCKS (1, 6); a bike house, dockless
 * house or hangar has entrance doors and may contain lockers or bike docks (5, 7). Scooter and rental
 * locations hold their own docks and vehicles (docs/decisions/locations.md).
 */
const HOLDS: Record<LocationType, readonly DeviceType[]> = {
  BIKE_LOCKERS: ["LOCKER"],
  BIKE_DOCKS: DOCKS,
  BIKE_HOUSE: BIKE_HOUSE,
  BIKE_HOUSE_DOCKLESS: BIKE_HOUSE,
  BIKE_HANGAR: BIKE_HOUSE,
  SCOOTER_DOCKS: ["SCOOTER_DOCK"],
  SCOOTER_DOCKS_V2: ["SCOOTER_DOCK"],
  BIKE_RENTALS: ["BIKE_RENT", "BIKE_DOCK", "DOCK"],
  BIKE_RENTALS_SESSIONLESS: ["BIKE_RENT", "DOCK_SESSIONLESS"],
  SCOOTER_RENTALS: ["SCOOTER_RENT", "SCOOTER_DOCK"],
};

export function locationHolds(location: LocationType, device: DeviceType): boolean {
  return device === "GUARD" || HOLDS[location].includes(device);
}

/** The device types among `held` that a location of type `location` cannot hold, each once, sorted. */
export function misfitDevices(location: LocationType, held: readonly DeviceType[]): DeviceType[] {
  return [...new Set(held.filter((d) => !locationHolds(location, d)))].sort();
}
