import type { GatewayPanel, LocationSummary } from "../shared/api/console-locations.ts";
import { call } from "./api.ts";

export type {
  ConsoleConnection as Connection,
  GatewayPanel,
  LocationSummary,
} from "../shared/api/console-locations.ts";
export { CONSOLE_CONNECTIONS as CONNECTIONS } from "../shared/api/console-locations.ts";

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
