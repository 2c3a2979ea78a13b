import { call } from "./api.ts";

/** The public API's connection, and `outage` once the cloud confirmed a location dark 2 hours or more. */
export const CONNECTIONS = ["online", "partially_online", "offline", "outage", "unknown"] as const;
export type Connection = (typeof CONNECTIONS)[number];

/** One location as GET /console/api/locations lists it. */
export type LocationSummary = {
  id: string;
  operator_id: string;
  code: string;
  label: string;
  name: string;
  type: string;
  address: string;
  latitude: number;
  longitude: number;
  connection: Connection;
  offline_since: string;
  devices: { available: number; online: number; total: number };
};

export type DeviceCell = {
  id: string;
  alias: string;
  type: string;
  state: { value: string; changed_at: string; timeout_at: string | null };
  lock_state: string;
  hardware_state: string;
  health: string | null;
  dead_since: string | null;
  last_seen_at: string | null;
  sleep_state: string;
  power_save_strategy: string;
  /** Absent where the role may not see it; null: nobody. */
  occupant?: string | null;
};

export type GatewayPanel = {
  id: string;
  online: boolean;
  health: string | null;
  status: boolean | null;
  status_at: string | null;
  last_heartbeat_at: string | null;
  outbox: {
    id: string;
    unconfirmed_from: number;
    reported_at: string;
    last_applied_seq: number | null;
    depth: number | null;
  } | null;
  keys: { cloud_version: number; held_version: number | null; confirmed_at: string | null } | null;
  runtime_version: string | null;
  uptime_s: number | null;
};

/** GET /console/api/locations/:id: the location, its devices by alias and its gateways, at the cloud's `now`. */
export type LocationPage = {
  now: string;
  location: LocationSummary;
  occupant_shown: boolean;
  devices: DeviceCell[];
  gateways: GatewayPanel[];
};

export async function listLocations(filter: { q: string; connection: string }): Promise<LocationSummary[]> {
  const query = new URLSearchParams();
  if (filter.q.trim()) query.set("q", filter.q.trim());
  if (filter.connection) query.set("connection", filter.connection);
  const qs = query.toString();
  const res = await call<{ data: LocationSummary[] }>("GET", `/console/api/locations${qs ? `?${qs}` : ""}`);
  return res.data;
}

export function getLocation(id: string): Promise<LocationPage> {
  return call<LocationPage>("GET", `/console/api/locations/${encodeURIComponent(id)}`);
}
