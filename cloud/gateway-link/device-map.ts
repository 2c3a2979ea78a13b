import { createHash } from "node:crypto";
import type { Logger } from "pino";
import type { Clock, TimerHandle } from "../../shared/time/clock.ts";
import type { DeviceMap } from "../../shared/wire/messages.ts";
import { deviceRepository } from "../devices/device-repository.ts";
import { parseLocationAttrs } from "../locations/location-attrs.ts";
import type { Db, Executor } from "../store/db.ts";
import { gatewayRepository } from "./gateway-repository.ts";

/**
 * The device map of one gateway, as the cloud's store describes it: published retained on its `config`
 * topic, so the gateway gets it whenever it connects (docs/decisions/gateway-daemon.md).
 */
export async function deviceMapFor(db: Executor, gatewayId: string): Promise<DeviceMap> {
  const devices = await deviceRepository(db).wiringOf(gatewayId);
  const gw = await gatewayRepository(db).locationOf(gatewayId);
  // What local access may do there travels with the map (rfid_parking: a tap parks on a free locker).
  const location = gw ? { id: gw.id, rfid_parking: parseLocationAttrs(gw.attrs).rfid_parking } : undefined;
  const version = createHash("sha256")
    .update(JSON.stringify({ devices, location }))
    .digest("hex")
    .slice(0, 16);
  return { gateway_id: gatewayId, version, ...(location ? { location } : {}), devices };
}

/**
 * Stores each gateway's current map version (after a manifest changed devices), so running clouds can
 * tell with one small query which maps to publish. Returns the gateways whose map changed.
 */
export async function recordMapVersions(db: Executor): Promise<string[]> {
  const changed: string[] = [];
  const gateways = gatewayRepository(db);
  for (const gw of await gateways.mapVersions()) {
    const { version } = await deviceMapFor(db, gw.id);
    if (version === gw.map_version) continue;
    await gateways.setMapVersion(gw.id, version);
    changed.push(gw.id);
  }
  return changed;
}

/**
 * Polls the stored map versions and publishes the maps this process has not published yet. Cheap (one
 * row per gateway), and it works whoever changed the store: the manifest CLI, or another replica.
 */
export function watchDeviceMaps(deps: {
  db: Db;
  clock: Clock;
  log: Logger;
  everyMs: number;
  isPublished: (gatewayId: string, version: string) => boolean;
  publish: (gatewayIds: string[]) => Promise<void>;
}) {
  let timer: TimerHandle | null = null;
  async function check(): Promise<void> {
    const rows = await gatewayRepository(deps.db).mapVersions();
    const due = rows
      .filter((r) => r.map_version !== null && !deps.isPublished(r.id, r.map_version))
      .map((r) => r.id);
    if (due.length === 0) return;
    await deps.publish(due);
    deps.log.info({ gateways: due }, "new device maps published");
  }
  const tick = () => {
    timer = deps.clock.setTimer(deps.everyMs, () => {
      check()
        .catch((err: unknown) => deps.log.warn({ err }, "device map check failed"))
        .finally(() => {
          if (timer) tick();
        });
    });
  };
  tick();
  return {
    check,
    stop() {
      if (timer) deps.clock.clearTimer(timer);
      timer = null;
    },
  };
}
