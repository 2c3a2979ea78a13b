import type { DeviceType } from "../../shared/domain/device-types.ts";
import type { Executor } from "../store/db.ts";

/** Where a site event happened: the operator told of it and its location. */
export type Place = { operator_id: string; location_id: string };
/** A device as site events name it. */
export type DeviceSubject = Place & { alias: string; type: DeviceType };

/** What a site event is about: the gateway or device that raised it, as its payload names them. */
export function subjectRepository(db: Executor) {
  return {
    gatewayPlace(gatewayId: string): Promise<Place | undefined> {
      return db
        .selectFrom("gateways")
        .select(["operator_id", "location_id"])
        .where("id", "=", gatewayId)
        .executeTakeFirst();
    },

    device(deviceId: string): Promise<DeviceSubject | undefined> {
      return db
        .selectFrom("devices")
        .select(["operator_id", "location_id", "alias", "type"])
        .where("id", "=", deviceId)
        .executeTakeFirst();
    },
  };
}

export type SubjectRepository = ReturnType<typeof subjectRepository>;
