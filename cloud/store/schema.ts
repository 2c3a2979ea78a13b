import type { CommandEvent, CommandRequest } from "../../shared/api/command.ts";
import type { HardwareState } from "../../shared/api/device.ts";
import type { LocationStatus, LocationType } from "../../shared/api/location.ts";
import type { CommandStateValue } from "../../shared/domain/command-machine.ts";
import type { DeviceStateValue, LockState, StableState } from "../../shared/domain/device-machine.ts";
import type {
  CommandName,
  DeviceType,
  PowerSaveStrategy,
  SleepState,
} from "../../shared/domain/device-types.ts";
import type {
  HardwareEvent,
  SensorCause,
  CommandRequest as WireCommand,
} from "../../shared/wire/messages.ts";
import type { Json } from "./json-column.ts";
import type { AccessListTables } from "./tables/access-list-tables.ts";
import type { AlarmTables } from "./tables/alarm-tables.ts";
import type { AuditTables } from "./tables/audit-tables.ts";
import type { DeviceAttrs } from "./tables/device-attrs.ts";
import type { KeySyncTables } from "./tables/key-sync-tables.ts";
import type { PhotoTables } from "./tables/photo-tables.ts";
import type { ReadingMarks } from "./tables/reading-marks.ts";
import type { SessionTables } from "./tables/session-tables.ts";
import type { SiteEventTables } from "./tables/site-event-tables.ts";
import type { StaffTables } from "./tables/staff-tables.ts";
import type { UserTables } from "./tables/user-tables.ts";
import type { WebhookTables } from "./tables/webhook-tables.ts";
import type { WhitelistTables } from "./tables/whitelist-tables.ts";

/**
 * Table types of the cloud store. Portable across SQLite and PostgreSQL by construction: timestamps are
 * RFC 3339 UTC text (sortable as text), booleans are 0/1 integers, structured values are JSON text.
 * Columns that hold a domain value carry its type, and JSON columns the type of what they hold (`Json<T>`),
 * so the store speaks the domain's words and only the repositories turn text into values.
 */
export interface OperatorsTable {
  id: string;
  name: string;
  created_at: string;
}

export interface ApiClientsTable {
  client_id: string;
  operator_id: string;
  name: string;
  secret_hash: string;
  /** JSON array of Permission */
  permissions: string;
  created_at: string;
}

export interface PublicAreasTable {
  id: string;
  operator_id: string;
  name: string;
}

export interface PublicAreaLocationsTable {
  public_area_id: string;
  location_id: string;
}

export interface LocationsTable {
  id: string;
  operator_id: string;
  code: string;
  label: string;
  type: LocationType;
  status: LocationStatus;
  latitude: number;
  longitude: number;
  /** JSON array of public tags */
  tags: string;
  /** JSON object of the remaining location fields (see cloud/locations/location-attrs.ts) */
  attrs: string;
  created_at: string;
  updated_at: string;
}

export interface GatewaysTable {
  id: string;
  operator_id: string;
  location_id: string;
  secret_hash: string;
  /** Last retained status: 1 online, 0 offline, null never heard. */
  online: number | null;
  status_at: string | null;
  /** The token of the session whose `online` was applied last: an older session's Last Will is stale. */
  session: string | null;
  /** Version of the device map the store describes, written by the manifest; running clouds publish it. */
  map_version: string | null;
  /** When the gateway's latest heartbeat arrived (the cloud's clock); null before the first. */
  heartbeat_at: string | null;
  /** What the latest heartbeat said (migration 027), null where it did not: rows its outbox holds unconfirmed, */
  outbox_depth: number | null;
  /** the daemon's package version, */
  runtime_version: string | null;
  /** and when the daemon started, on the cloud's clock. */
  runtime_started_at: string | null;
  created_at: string;
}

/** How many heartbeats a location's gateways have sent: location views check it (migration 017). */
export interface LocationHeartbeatsTable {
  location_id: string;
  beats: number;
}

export interface DevicesTable {
  id: string;
  operator_id: string;
  location_id: string;
  gateway_id: string | null;
  type: DeviceType;
  alias: string;
  code: string;
  hardware_id: string;
  has_camera: number;
  power_save_strategy: PowerSaveStrategy;
  sleep_state: SleepState;
  state_value: DeviceStateValue;
  state_changed_at: string;
  state_timeout_at: string | null;
  state_restore: Json<StableState> | null;
  lock_state: LockState;
  hardware_state: HardwareState;
  /**
   * When the device was seen, as of its last write: a reachable device was seen at its gateway's
   * `heartbeat_at` too, when that is later (read `last_seen_at` through the device repository).
   */
  seen_at: string | null;
  /** 1: its gateway's latest heartbeat reached it (a GUARD always); 0: that heartbeat did not. */
  reachable: number;
  offline_at: string | null;
  user_id: string | null;
  user_access_key: string | null;
  /** Who holds the current booking (principal id), for cancel-booking. */
  booked_by: string | null;
  /** The command driving the current interim state, if any. */
  command_id: string | null;
  last_lock_command_at: string | null;
  /** Last sensor report (1/0, null before the first): door open, item present; and when it came. */
  door_open: number | null;
  item_present: number | null;
  sensors_at: string | null;
  /** Outbox position of the last report applied per sensor field (cloud/devices/reading-order.ts). */
  sensor_marks: Json<ReadingMarks> | null;
  /** Tags, comment, flags, price list, settings, bus address */
  attrs: Json<DeviceAttrs>;
  /** Optimistic concurrency: every state write checks and bumps it. */
  version: number;
  created_at: string;
  updated_at: string;
}

export interface CommandsTable {
  id: string;
  operator_id: string;
  device_id: string;
  name: CommandName;
  state_value: CommandStateValue;
  state_reason: string;
  state_timeout_at: string | null;
  /** The accepted request body */
  params: Json<CommandRequest>;
  requested_by: string;
  events: Json<CommandEvent[]>;
  /** The wire request as published, so it can be delivered again after a reconnect (null on bookings from before they travelled). */
  wire_request: Json<WireCommand> | null;
  created_at: string;
  updated_at: string;
}

/** One outbox message applied: (gateway_id, outbox_id, seq), '' for a message that named no outbox. */
export interface AppliedSeqsTable {
  gateway_id: string;
  outbox_id: string;
  seq: number;
  applied_at: string;
}

/**
 * What a gateway's outbox says in its heartbeats: every seq below `unconfirmed_from` it has deleted and never
 * sends again. Its `applied_seqs` rows below a checkpoint old enough may go
 * (cloud/gateway-link/applied-seqs-pruner.ts).
 */
export interface GatewayOutboxesTable {
  gateway_id: string;
  outbox_id: string;
  /** The highest reported (heartbeats may arrive out of order; the value only grows). */
  unconfirmed_from: number;
  /** When that value was first reported. */
  reported_at: string;
  /** An earlier report and its time, moved up to the latest once the pruner has used it. */
  checkpoint_from: number;
  checkpoint_at: string;
}

export interface HardwareEventsTable {
  gateway_id: string;
  outbox_id: string;
  seq: number;
  device_id: string | null;
  source: string;
  event: HardwareEvent["event"];
  detail: string;
  /** When the gateway saw it (its clock) and when the cloud received it (ours). */
  observed_at: string;
  received_at: string;
}

/** Device state changes the sensors caused (no command did): who and why, for the site's history. */
export interface DeviceStateChangesTable {
  gateway_id: string;
  outbox_id: string;
  seq: number;
  device_id: string;
  from_value: DeviceStateValue;
  to_value: DeviceStateValue;
  lock_state: LockState;
  /** Why the gateway reported, and its detail (a technician's name and reason). */
  cause: SensorCause;
  detail: string;
  observed_at: string;
  received_at: string;
}

/** One Idempotency-Key of one caller on one route (docs/decisions/idempotency.md). */
export interface IdempotencyKeysTable {
  operator_id: string;
  client_id: string;
  method: string;
  /** The route's pattern, e.g. /device/v1/devices/:device_id/commands */
  route: string;
  idempotency_key: string;
  /** SHA-256 of the canonical request (method, route, parameters, body) */
  request_hash: string;
  /** in_progress | completed */
  state: string;
  /** Who holds the reservation; completing, releasing and taking over compare it. */
  holder: string;
  /** While in progress: after this the reservation counts as abandoned. */
  lease_until: string | null;
  response_status: number | null;
  /** JSON object of the response headers replayed with the body */
  response_headers: string | null;
  response_body: string | null;
  created_at: string;
  expires_at: string;
}

export interface Database
  extends UserTables,
    SessionTables,
    AccessListTables,
    KeySyncTables,
    SiteEventTables,
    WebhookTables,
    WhitelistTables,
    PhotoTables,
    AuditTables,
    StaffTables,
    AlarmTables {
  operators: OperatorsTable;
  api_clients: ApiClientsTable;
  public_areas: PublicAreasTable;
  public_area_locations: PublicAreaLocationsTable;
  locations: LocationsTable;
  gateways: GatewaysTable;
  location_heartbeats: LocationHeartbeatsTable;
  devices: DevicesTable;
  commands: CommandsTable;
  applied_seqs: AppliedSeqsTable;
  gateway_outboxes: GatewayOutboxesTable;
  hardware_events: HardwareEventsTable;
  device_state_changes: DeviceStateChangesTable;
  idempotency_keys: IdempotencyKeysTable;
}
