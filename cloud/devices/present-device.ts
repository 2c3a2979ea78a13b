import type { Device } from "../../shared/api/device.ts";
import { deviceUri, locationUri, priceListUri } from "../../shared/api/uris.ts";
import { commandsFor } from "../../shared/domain/device-types.ts";
import { deriveHealth, type HealthView, legacyHealth } from "../../shared/domain/health.ts";
import { can, type Principal } from "../auth/principal.ts";
import type { DeviceRecord } from "../store/device-record.ts";
import type { DeviceSummary } from "./device-repository.ts";

export function healthOf(
  row: Pick<DeviceSummary, "last_seen_at" | "offline_at">,
  now: Date,
): HealthView | null {
  return deriveHealth({ last_seen_at: row.last_seen_at, offline_at: row.offline_at }, now);
}

/** A device is available when its API state says so (spec rule 3) and its hardware is in order. */
export function isAvailable(row: Pick<DeviceSummary, "state_value" | "hardware_state">): boolean {
  return row.state_value === "UNLOCKED" && row.hardware_state === "NORMAL";
}

/** `hasAllowlist`: a whitelist targets the device or its location (cloud/whitelists/allowlists.ts). */
export function presentDevice(
  row: DeviceRecord,
  now: Date,
  principal: Principal,
  hasAllowlist: boolean,
): Device {
  const { attrs, type } = row;
  const health = healthOf(row, now);
  const commandsUri = `${deviceUri(row.id)}/commands`;
  const device: Device = {
    id: row.id,
    uri: deviceUri(row.id),
    type,
    alias: row.alias,
    code: row.code,
    nr: row.alias,
    state: {
      changed_at: row.state.changed_at,
      value: row.state.value,
      timeout_at: row.state.timeout_at,
    },
    lock_state: row.lock_state,
    hardware_state: row.hardware_state,
    heartbeat_v2: health && {
      health: health.health,
      dead_since: health.dead_since,
      sent_at: row.last_seen_at,
      latency_millis: row.last_seen_at ? 0 : null,
    },
    heartbeat_health: legacyHealth(health),
    heartbeat: row.last_seen_at,
    heartbeat_latency: null,
    wifi_rssi: null,
    sleep_state: row.sleep_state,
    power_save_strategy: row.power_save_strategy,
    commands: Object.fromEntries(commandsFor(type, row.has_camera).map((c) => [c, commandsUri])),
    has_otp_support: attrs.has_otp_support,
    has_access_lists: attrs.has_access_lists,
    has_allowlist: hasAllowlist,
    has_subscription: attrs.has_subscription,
    has_camera: row.has_camera,
    price_list: attrs.price_list_id
      ? { id: attrs.price_list_id, uri: priceListUri(attrs.price_list_id) }
      : null,
    location: { id: row.location_id, uri: locationUri(row.location_id) },
    tags: attrs.tags,
    comment: attrs.comment,
    hardware_id: row.hardware_id,
  };
  if (can(principal, "DEVICE_PRIVATE_FIELDS")) {
    device.user =
      row.user_id || row.user_access_key ? { access_key: row.user_access_key, id: row.user_id } : null;
    device.settings = { created_at: row.created_at, updated_at: row.updated_at, deep_link: attrs.deep_link };
  }
  return device;
}
