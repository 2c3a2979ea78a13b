import type { Location, LocationDetail } from "../../shared/api/location.ts";
import { locationUri } from "../../shared/api/uris.ts";
import { can, type Principal } from "../auth/principal.ts";
import type { LocationsTable } from "../store/schema.ts";
import type { LocationAggregates } from "./aggregates.ts";
import { type LocationAttrs, parseLocationAttrs } from "./location-attrs.ts";

/** `name` combines code and label (spec: Location): "#<code> <label>". */
export function locationName(code: string, label: string): string {
  return `#${code} ${label}`.trim();
}

export function iconType(row: Pick<LocationsTable, "type">, attrs: Pick<LocationAttrs, "icon_type">): string {
  return attrs.icon_type || row.type.toLowerCase();
}

/** Deprecated icon URLs stay present but empty: clients use icon.type (docs/decisions/locations.md). */
const NO_ICON = { png2x: "", svg: "", png: "" };

/**
 * One location as a caller sees it: its row, its devices' aggregates, the whitelists active in it
 * (cloud/whitelists/allowlists.ts) and whether to list each device.
 */
export type LocationView = {
  row: LocationsTable;
  agg: LocationAggregates;
  allowlistIds: readonly string[];
  principal: Principal;
  includeResources: boolean;
};

/** `a` is the row's attributes when the caller has parsed them already. */
export function presentLocation(v: LocationView, a = parseLocationAttrs(v.row.attrs)): Location {
  const { row, agg, principal } = v;
  const uri = locationUri(row.id);
  const location: Location = {
    id: row.id,
    uri,
    code: row.code,
    label: row.label,
    name: locationName(row.code, row.label),
    type: row.type,
    status: row.status,
    connection: agg.connection,
    offline_since: agg.offline_since,
    address: a.address,
    latitude: row.latitude,
    longitude: row.longitude,
    support_phone: a.support_phone,
    support_email: a.support_email,
    terms_url: a.terms_url,
    tags: JSON.parse(row.tags) as string[],
    allowlisted: v.allowlistIds.length > 0,
    has_access_lists: a.has_access_lists,
    icon: { ...NO_ICON, type: iconType(row, a) },
    devices: {
      total: agg.total,
      available: agg.available,
      online: agg.online,
      ...(v.includeResources ? { resources: agg.resources } : {}),
      uri: `/device/v1/locations/${row.id}/devices`,
      icon: "",
    },
    rental_devices: { available: 0, icon: "", uri: `${uri}/rental-devices` },
  };
  if (can(principal, "RESTRICTED_FIELDS")) {
    Object.assign(location, {
      owner_id: a.owner_id,
      operator_id: a.operator_id,
      reseller_id: a.reseller_id,
      distributor_id: a.distributor_id,
      description: a.description,
      comment: a.comment,
      private_tags: a.private_tags,
      has_maintenance_issues: a.has_maintenance_issues,
      audit: { uri: `${uri}/audit` },
    });
  }
  return location;
}

export function presentLocationDetail(v: LocationView): LocationDetail {
  const { row, principal } = v;
  const a = parseLocationAttrs(row.attrs);
  const uri = locationUri(row.id);
  const detail: LocationDetail = {
    ...presentLocation(v, a),
    subscriptions: { uri: `${uri}/subscriptions` },
    descriptions: { uri: `${uri}/descriptions` },
    whitelists: { uri: `/whitelist/v1/locations/${row.id}/whitelists` },
    external_devices: { uri: `${uri}/external-devices` },
    organizations: { uri: `${uri}/organizations` },
    access_list_ids: a.access_list_ids,
    allowlist_ids: [...v.allowlistIds],
    rfid_parking: a.rfid_parking,
    app_parking: a.app_parking,
    booking_available: a.booking_available,
    e_charging: a.e_charging,
    free_of_charge: a.free_of_charge,
    free_parking_details: a.free_parking_details,
    free_parking_summary: a.free_parking_summary,
    free_parking_hours: a.free_parking_hours,
    segment: a.segment,
    district: a.district,
    region: a.region,
    city: a.city,
    use_case: a.use_case,
    state: a.state,
    terms_updated_at: a.terms_updated_at,
    max_user_sessions: a.max_user_sessions,
  };
  if (can(principal, "RESTRICTED_FIELDS")) {
    Object.assign(detail, {
      generation: a.generation,
      auto_restarts_enabled: a.auto_restarts_enabled,
      power_save_strategy: a.power_save_strategy,
      analytics_dashboard_id: a.analytics_dashboard_id,
    });
  }
  return detail;
}
