import { type WhitelistExecutor, whitelistRepository } from "./whitelist-repository.ts";

/**
 * What the location and device records show of whitelists (spec: `allowlisted`, `allowlist_ids`,
 * `has_allowlist`), derived from the whitelists' targets, never declared (docs/decisions/locations.md).
 * A whitelist is active in a location when it targets the location or one of its devices (the same set the
 * location's whitelist route lists); a device has one when a whitelist targets it or its location (the
 * cards the gateway lets open it).
 */

/** Each location's active whitelist ids, sorted; a location with none is absent from the map. */
export async function allowlistIdsAt(
  db: WhitelistExecutor,
  locationIds: readonly string[],
): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>();
  for (const { location_id, whitelist_id } of await whitelistRepository(db).allowlistsAt(locationIds)) {
    const ids = out.get(location_id) ?? [];
    if (!ids.includes(whitelist_id)) ids.push(whitelist_id);
    out.set(location_id, ids);
  }
  for (const ids of out.values()) ids.sort();
  return out;
}

/** The ids of those devices that a whitelist targets, directly or through their location. */
export async function devicesWithAllowlist(
  db: WhitelistExecutor,
  devices: readonly { id: string; location_id: string }[],
): Promise<Set<string>> {
  if (devices.length === 0) return new Set();
  const locationIds = [...new Set(devices.map((device) => device.location_id))];
  const targeted = await whitelistRepository(db).targetedAmong(
    devices.map((device) => device.id),
    locationIds,
  );
  const ids = new Set(targeted.filter((t) => t.target_type === "device").map((t) => t.target_id));
  const locations = new Set(targeted.filter((t) => t.target_type === "location").map((t) => t.target_id));
  return new Set(
    devices
      .filter((device) => ids.has(device.id) || locations.has(device.location_id))
      .map((device) => device.id),
  );
}
