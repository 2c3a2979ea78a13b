import type { Health } from "../domain/health.ts";

/**
 * What the console's location routes answer (cloud/console/console-locations.ts), typed once for the cloud
 * that builds it and the console that reads it; zod-free, so the console's bundle stays small.
 */

/** The public API's connection, and `outage` where the cloud confirmed the location dark 2 hours or more. */
export const CONSOLE_CONNECTIONS = ["online", "partially_online", "offline", "outage", "unknown"] as const;
export type ConsoleConnection = (typeof CONSOLE_CONNECTIONS)[number];

export type LocationSummary = {
  id: string;
  operator_id: string;
  code: string;
  label: string;
  name: string;
  type: string;
  address: string;
  /** Where it is (WGS 84), for the overview's map. */
  latitude: number;
  longitude: number;
  connection: ConsoleConnection;
  offline_since: string;
  devices: { available: number; online: number; total: number };
};

export type GatewayPanel = {
  id: string;
  online: boolean;
  health: Health | null;
  /** The retained status: true, false, or null before the gateway ever said. */
  status: boolean | null;
  status_at: string | null;
  last_heartbeat_at: string | null;
  outbox: {
    id: string;
    unconfirmed_from: number;
    reported_at: string;
    last_applied_seq: number | null;
    /** Rows the gateway's outbox holds that the cloud has not confirmed, as its latest heartbeat said. */
    depth: number | null;
  } | null;
  keys: { cloud_version: number; held_version: number | null; confirmed_at: string | null } | null;
  /** The daemon's package version, as its latest heartbeat said. */
  runtime_version: string | null;
  /** When the daemon started, on the cloud's clock. */
  started_at: string | null;
  /** Seconds from that start to the latest heartbeat. Each null where the heartbeat did not say (older gateways). */
  uptime_s: number | null;
};
