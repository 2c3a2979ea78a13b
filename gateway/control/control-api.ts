import type { BusMonitor } from "../adapters/hardware/bus-monitor.ts";

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
  /** The whitelist key cache: the cloud's version it holds (0: never synced) and how many grants. */
  keys: { version: number; grants: number };
};

/** One of a card's grants in the key cache, and whether it opens anything here now. */
export type CardGrantView = {
  whitelist_id: string;
  status: "ACTIVE" | "INACTIVE";
  expires_at: string | null;
  is_master_key: boolean;
  location_ids: string[];
  /** Aliases of the targeted devices this gateway drives (ids it does not know stay ids). */
  devices: string[];
  /** "valid", or why not: inactive, expired (targets are checked per device at the tap). */
  state: "valid" | "inactive" | "expired";
};

export type CardKeysView = { card_id: string; version: number; grants: CardGrantView[] };

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
  /**
   * A device that saves power (spec: power_save_strategy other than NONE): its sleep state as the hardware
   * last showed it ("" awake; null: not known since the daemon started).
   */
  power_save?: {
    strategy: "REMOTE_WAKEUP" | "LOCAL_WAKEUP";
    sleep_state: "" | "LIGHT_SLEEP" | "DEEP_SLEEP" | null;
  };
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
  /** A card's grants in the key cache (the technician typed the card id). */
  keys(card: string): Promise<CardKeysView>;
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
  "keys",
  "probeSerial",
  "doctor",
] as const satisfies readonly (keyof ControlApi)[];

/** Error codes on the wire. A daemon may throw ControlError with its own code (e.g. "device_not_found"). */
export const CONTROL_ERROR = {
  unknownMethod: "unknown_method",
  badRequest: "bad_request",
  /** An api method threw an error without a code of its own. */
  failed: "failed",
  /** The alias names no device: parkctl exits 4. */
  deviceNotFound: "device_not_found",
} as const;

/** One lock bus as the control API sees it. */
export type ControlBus = {
  name: string;
  path: string;
  boards: readonly number[];
  client: { readonly isOpen: boolean };
  monitor: Pick<BusMonitor, "health" | "isReachable" | "poll">;
};

/** One RFID reader as the control API sees it. */
export type ControlReader = {
  id: string;
  path: string;
  port: { readonly isOpen: boolean; readonly lastSeen: string | null };
};
