import { isLockingDevice } from "../../shared/domain/device-types.ts";
import { isOnline } from "../../shared/domain/health.ts";
import type { DeviceSummary } from "../devices/device-repository.ts";
import { healthOf, isAvailable } from "../devices/present-device.ts";

export type LocationAggregates = {
  total: number;
  available: number;
  online: number;
  connection: "online" | "partially_online" | "offline" | "unknown";
  offline_since: string;
  resources: {
    alias: string;
    available: { last_updated: string; value: boolean };
    online: { last_updated: string; value: boolean };
  }[];
};

type Row = Omit<DeviceSummary, "location_id">;

/**
 * Location aggregates (spec: Location, rules 8 and 9): `total` counts locking devices, `available` those
 * both available and online; `connection` looks at every device, GUARDs and doors included, and
 * `offline_since` is when the last of them went dead.
 */
export function aggregate(devices: readonly Row[], now: Date): LocationAggregates {
  let total = 0;
  let available = 0;
  let online = 0;
  let anyKnown = false;
  let onlineAll = 0;
  let lastDeath = "";
  const resources: LocationAggregates["resources"] = [];
  for (const device of devices) {
    const health = healthOf(device, now);
    const up = isOnline(health);
    if (health) anyKnown = true;
    if (up) onlineAll++;
    if (health?.dead_since && health.dead_since > lastDeath) lastDeath = health.dead_since;
    if (!isLockingDevice(device.type)) continue;
    const free = isAvailable(device);
    total++;
    if (up) online++;
    if (up && free) available++;
    resources.push({
      alias: device.alias,
      available: { last_updated: device.state_changed_at, value: free && up },
      online: { last_updated: device.last_seen_at ?? device.offline_at ?? device.created_at, value: up },
    });
  }
  let connection: LocationAggregates["connection"] = "unknown";
  if (anyKnown)
    connection = onlineAll === devices.length ? "online" : onlineAll === 0 ? "offline" : "partially_online";
  return {
    total,
    available,
    online,
    connection,
    offline_since: connection === "offline" ? lastDeath : "",
    resources,
  };
}
