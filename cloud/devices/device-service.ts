import type { Clock } from "../../shared/clock.ts";
import { AppError } from "../../shared/errors.ts";
import type { Principal } from "../auth/principal.ts";
import type { Db } from "../store/db.ts";
import { presentDevice } from "./present-device.ts";

export function createDeviceService(deps: { db: Db; clock: Clock }) {
  const { db, clock } = deps;
  return {
    /** The device list has no 404 (spec: Errors): another operator's location lists nothing. */
    async listByLocation(principal: Principal, locationId: string) {
      const rows = await db
        .selectFrom("devices")
        .selectAll()
        .where("location_id", "=", locationId)
        .where("operator_id", "=", principal.operatorId)
        .orderBy("alias")
        .orderBy("id")
        .execute();
      const now = clock.now();
      return rows.map((r) => presentDevice(r, now, principal));
    },

    async get(principal: Principal, id: string) {
      const row = await db
        .selectFrom("devices")
        .selectAll()
        .where("id", "=", id)
        .where("operator_id", "=", principal.operatorId)
        .executeTakeFirst();
      if (!row) throw new AppError("ERRORS.NOT_FOUND", `Device ${id} not found`);
      return presentDevice(row, clock.now(), principal);
    },
  };
}

export type DeviceService = ReturnType<typeof createDeviceService>;
