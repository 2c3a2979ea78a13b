/**
 * What the running daemon offers parkctl over its control socket. The socket speaks JSON lines:
 * request `{"id": n, "method": "<name>", "params": {...}}`, answer `{"id": n, "result": ...}` or
 * `{"id": n, "error": {"code": "...", "message": "..."}}`.
 */
export type CheckStatus = "pass" | "warn" | "fail";

export type GatewayStatus = {
  gateway_id: string;
  version: string;
  uptime_s: number;
  now: string;
  broker: { url: string; connected: boolean; since: string | null };
  buses: {
    name: string;
    path: string;
    open: boolean;
    boards: { addr: number; reachable: boolean; last_seen: string | null }[];
  }[];
  readers: { id: string; path: string; open: boolean; last_seen: string | null }[];
  outbox: { pending: number; oldest_age_s: number | null };
  devices: number;
};

export type DeviceView = {
  device_id: string;
  alias: string;
  type: string;
  bus: string | null;
  board: number | null;
  channel: number | null;
  reachable: boolean;
  latch: "locked" | "unlocked" | null;
  door_open: boolean | null;
  item_present: boolean | null;
  /** When the sensors were last read or reported (null: not since the daemon started). */
  read_at: string | null;
  last_command: {
    name: string;
    result: string;
    at: string;
    command_id?: string;
    /** Why it failed (or what it found); empty on a plain success. */
    reason?: string;
  } | null;
  /** The booking the gateway holds for the device (who, until when), honoured by local access. */
  booking?: { holder: string; until: string } | null;
};

export type ActuationResult = {
  ok: boolean;
  result: string;
  latch: "locked" | "unlocked" | null;
  ms: number;
};

export type OutboxView = {
  pending: number;
  oldest_age_s: number | null;
  rows: { seq: number; type: string; age_s: number }[];
};

export type SerialProbe = {
  bus: string;
  path: string;
  open: boolean;
  boards: {
    addr: number;
    ok: boolean;
    firmware: string | null;
    channels: number | null;
    error: string | null;
  }[];
};

export type DoctorCheck = { check: string; status: CheckStatus; detail: string; hint: string };

export interface ControlApi {
  status(): Promise<GatewayStatus>;
  devices(): Promise<DeviceView[]>;
  device(alias: string): Promise<DeviceView | null>;
  /** A local actuation by a technician: recorded with who and why, and reported to the cloud. */
  actuate(alias: string, action: "lock" | "unlock", who: string, why: string): Promise<ActuationResult>;
  /** unlock → status → lock → status on one device, each step timed. */
  testCycle(
    alias: string,
    who: string,
  ): Promise<{ alias: string; steps: (ActuationResult & { step: string })[] }>;
  outbox(): Promise<OutboxView>;
  probeSerial(): Promise<SerialProbe[]>;
  doctor(): Promise<DoctorCheck[]>;
}

export const CONTROL_METHODS = [
  "status",
  "devices",
  "device",
  "actuate",
  "testCycle",
  "outbox",
  "probeSerial",
  "doctor",
] as const satisfies readonly (keyof ControlApi)[];
