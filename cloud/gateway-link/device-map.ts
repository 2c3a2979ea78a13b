import { createHash } from "node:crypto";
import type { DeviceMap } from "../../shared/wire/messages.ts";
import { parseDeviceAttrs } from "../devices/device-attrs.ts";
import type { Db } from "../store/db.ts";

/** The device map of one gateway, as the cloud's store describes it (flow: gateway start-up). */
export async function deviceMapFor(db: Db, gatewayId: string): Promise<DeviceMap> {
  const rows = await db
    .selectFrom("devices")
    .select(["id", "type", "alias", "attrs", "has_camera"])
    .where("gateway_id", "=", gatewayId)
    .orderBy("id")
    .execute();
  const devices = rows.map((r) => ({
    device_id: r.id,
    type: r.type,
    alias: r.alias,
    bus: parseDeviceAttrs(r.attrs).bus,
    has_camera: r.has_camera === 1,
  }));
  const version = createHash("sha256").update(JSON.stringify(devices)).digest("hex").slice(0, 16);
  return { gateway_id: gatewayId, version, devices };
}

export async function allGatewayIds(db: Db): Promise<string[]> {
  return (await db.selectFrom("gateways").select("id").orderBy("id").execute()).map((r) => r.id);
}
