import { deviceRepository } from "../../cloud/devices/device-repository.ts";
import type { Executor } from "../../cloud/store/db.ts";
import type { DeviceRecord } from "../../cloud/store/device-record.ts";
import { fx, OP_A, OP_B } from "./fixture-site.ts";

/** Every location of the fixture site, with its operator. */
export const FIXTURE_LOCATIONS = [
  [OP_A, fx.location("L1")],
  [OP_A, fx.location("D1")],
  [OP_A, fx.location("H1")],
  [OP_B, fx.location("B1")],
] as const;

/** Every device of the fixture site as the device repository reads it, by id. */
export async function fixtureDevices(db: Executor): Promise<DeviceRecord[]> {
  const devices = deviceRepository(db);
  const all: DeviceRecord[] = [];
  for (const [operatorId, locationId] of FIXTURE_LOCATIONS)
    all.push(...(await devices.listAtLocation(operatorId, locationId)));
  return all.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}
