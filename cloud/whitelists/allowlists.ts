import type { Executor } from "../store/db.ts";

/**
 * What the location and device records show of whitelists (spec: `allowlisted`, `allowlist_ids`,
 * `has_allowlist`), derived from the whitelists' targets, never declared (docs/decisions/locations.md).
 * A whitelist is active in a location when it targets the location or one of its devices (the same set the
 * location's whitelist route lists); a device has one when a whitelist targets it or its location (the
 * cards the gateway lets open it).
 */

/** Each location's active whitelist ids, sorted; a location with none is absent from the map. */
export async function allowlistIdsAt(
  db: Executor,
  locationIds: readonly string[],
): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>();
  if (locationIds.length === 0) return out;
  const [direct, viaDevices] = await Promise.all([
    db
      .selectFrom("whitelist_targets")
      .select(["target_id as location_id", "whitelist_id"])
      .where("target_type", "=", "location")
      .where("target_id", "in", locationIds)
      .execute(),
    db
      .selectFrom("whitelist_targets as t")
      .innerJoin("devices as d", "d.id", "t.target_id")
      .select(["d.location_id", "t.whitelist_id"])
      .where("t.target_type", "=", "device")
      .where("d.location_id", "in", locationIds)
      .execute(),
  ]);
  for (const { location_id, whitelist_id } of [...direct, ...viaDevices]) {
    const ids = out.get(location_id) ?? [];
    if (!ids.includes(whitelist_id)) ids.push(whitelist_id);
    out.set(location_id, ids);
  }
  for (const ids of out.values()) ids.sort();
  return out;
}

/** The ids of those devices that a whitelist targets, directly or through their location. */
export async function devicesWithAllowlist(
  db: Executor,
  devices: readonly { id: string; location_id: string }[],
): Promise<Set<string>> {
  if (devices.length === 0) return new Set();
  const locationIds = [...new Set(devices.map((device) => device.location_id))];
  const targeted = await db
    .selectFrom("whitelist_targets")
    .select(["target_type", "target_id"])
    .where((eb) =>
      eb.or([
        eb.and([
          eb("target_type", "=", "device"),
          eb(
            "target_id",
            "in",
            devices.map((device) => device.id),
          ),
        ]),
        eb.and([eb("target_type", "=", "location"), eb("target_id", "in", locationIds)]),
      ]),
    )
    .distinct()
    .execute();
  const ids = new Set(targeted.filter((t) => t.target_type === "device").map((t) => t.target_id));
  const locations = new Set(targeted.filter((t) => t.target_type === "location").map((t) => t.target_id));
  return new Set(
    devices
      .filter((device) => ids.has(device.id) || locations.has(device.location_id))
      .map((device) => device.id),
  );
}
