import { AppError } from "../../shared/api/errors.ts";
import type { Clock } from "../../shared/time/clock.ts";
import type { Principal } from "../auth/principal.ts";
import type { Db } from "../store/db.ts";
import { devicesWithAllowlist } from "../whitelists/allowlists.ts";
import { deviceRepository } from "./device-repository.ts";
import { presentDevice } from "./present-device.ts";

export function createDeviceService(deps: { db: Db; clock: Clock }) {
  const { clock } = deps;
  const devices = deviceRepository(deps.db);
  return {
    /** The device list has no 404 (spec: Errors): another operator's location lists nothing. */
    async listByLocation(principal: Principal, locationId: string) {
      const found = await devices.listAtLocation(principal.operatorId, locationId);
      const allowlisted = await devicesWithAllowlist(deps.db, found);
      const now = clock.now();
      return found.map((device) => presentDevice(device, now, principal, allowlisted.has(device.id)));
    },

    async get(principal: Principal, id: string) {
      const device = await devices.findForOperator(principal.operatorId, id);
      if (!device) throw new AppError("ERRORS.NOT_FOUND", `Device ${id} not found`);
      const allowlisted = await devicesWithAllowlist(deps.db, [device]);
      return presentDevice(device, clock.now(), principal, allowlisted.has(device.id));
    },
  };
}

export type DeviceService = ReturnType<typeof createDeviceService>;
