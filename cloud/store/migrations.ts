import type { Kysely, Migration, MigrationProvider } from "kysely";
import { externalUsersMigration } from "./migrations/005-external-users.ts";
import { sessionsMigration } from "./migrations/006-sessions.ts";
import { accessListsMigration } from "./migrations/007-access-lists.ts";
import { whitelistsMigration } from "./migrations/008-whitelists.ts";
import { webhooksMigration } from "./migrations/009-webhooks.ts";
import { keySyncMigration } from "./migrations/010-key-sync.ts";
import { photosMigration } from "./migrations/011-photos.ts";
import { outboxIdentityMigration } from "./migrations/012-outbox-identity.ts";
import { locationDataVersionMigration } from "./migrations/013-location-data-version.ts";
import { sensorMarksMigration } from "./migrations/014-sensor-marks.ts";
import { devicesByGatewayMigration } from "./migrations/015-devices-by-gateway.ts";
import { gatewayHeartbeatsMigration } from "./migrations/016-gateway-heartbeats.ts";
import { locationHeartbeatsMigration } from "./migrations/017-location-heartbeats.ts";
import { signUpSafetyMigration } from "./migrations/018-sign-up-safety.ts";
import { allowlistVersionsMigration } from "./migrations/019-allowlist-versions.ts";
import { photoRetentionMigration } from "./migrations/020-photo-retention.ts";
import { staffMigration } from "./migrations/021-staff.ts";
import { alarmsMigration } from "./migrations/022-alarms.ts";
import { auditLogMigration } from "./migrations/023-audit-log.ts";
import { consoleLiveMigration } from "./migrations/024-console-live.ts";
import { riderTokenGenerationMigration } from "./migrations/025-rider-token-generation.ts";
import { gatewaySessionMigration } from "./migrations/026-gateway-session.ts";
import { gatewayRuntimeMigration } from "./migrations/027-gateway-runtime.ts";
import { locationLockOrderMigration } from "./migrations/028-location-lock-order.ts";

/** Migrations in code, written with Kysely's schema builder so one definition serves both stores. */
const migrations: Record<string, Migration> = {
  "001-init": {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable("operators")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("name", "text", (c) => c.notNull())
        .addColumn("created_at", "text", (c) => c.notNull())
        .execute();
      await db.schema
        .createTable("api_clients")
        .addColumn("client_id", "text", (c) => c.primaryKey())
        .addColumn("operator_id", "text", (c) => c.notNull().references("operators.id"))
        .addColumn("name", "text", (c) => c.notNull())
        .addColumn("secret_hash", "text", (c) => c.notNull())
        .addColumn("permissions", "text", (c) => c.notNull())
        .addColumn("created_at", "text", (c) => c.notNull())
        .execute();
      await db.schema
        .createTable("locations")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("operator_id", "text", (c) => c.notNull().references("operators.id"))
        .addColumn("code", "text", (c) => c.notNull())
        .addColumn("label", "text", (c) => c.notNull())
        .addColumn("type", "text", (c) => c.notNull())
        .addColumn("status", "text", (c) => c.notNull())
        .addColumn("latitude", "double precision", (c) => c.notNull())
        .addColumn("longitude", "double precision", (c) => c.notNull())
        .addColumn("tags", "text", (c) => c.notNull())
        .addColumn("attrs", "text", (c) => c.notNull())
        .addColumn("created_at", "text", (c) => c.notNull())
        .addColumn("updated_at", "text", (c) => c.notNull())
        .execute();
      await db.schema.createIndex("locations_operator").on("locations").column("operator_id").execute();
      await db.schema
        .createTable("public_areas")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("operator_id", "text", (c) => c.notNull().references("operators.id"))
        .addColumn("name", "text", (c) => c.notNull())
        .execute();
      await db.schema
        .createTable("public_area_locations")
        .addColumn("public_area_id", "text", (c) => c.notNull().references("public_areas.id"))
        .addColumn("location_id", "text", (c) => c.notNull().references("locations.id"))
        .addPrimaryKeyConstraint("public_area_locations_pk", ["public_area_id", "location_id"])
        .execute();
      await db.schema
        .createTable("gateways")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("operator_id", "text", (c) => c.notNull().references("operators.id"))
        .addColumn("location_id", "text", (c) => c.notNull().references("locations.id"))
        .addColumn("secret_hash", "text", (c) => c.notNull())
        .addColumn("online", "integer")
        .addColumn("status_at", "text")
        .addColumn("created_at", "text", (c) => c.notNull())
        .execute();
      await db.schema
        .createTable("devices")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("operator_id", "text", (c) => c.notNull().references("operators.id"))
        .addColumn("location_id", "text", (c) => c.notNull().references("locations.id"))
        .addColumn("gateway_id", "text", (c) => c.references("gateways.id"))
        .addColumn("type", "text", (c) => c.notNull())
        .addColumn("alias", "text", (c) => c.notNull())
        .addColumn("code", "text", (c) => c.notNull())
        .addColumn("hardware_id", "text", (c) => c.notNull())
        .addColumn("has_camera", "integer", (c) => c.notNull())
        .addColumn("power_save_strategy", "text", (c) => c.notNull())
        .addColumn("sleep_state", "text", (c) => c.notNull())
        .addColumn("state_value", "text", (c) => c.notNull())
        .addColumn("state_changed_at", "text", (c) => c.notNull())
        .addColumn("state_timeout_at", "text")
        .addColumn("state_restore", "text")
        .addColumn("lock_state", "text", (c) => c.notNull())
        .addColumn("hardware_state", "text", (c) => c.notNull())
        .addColumn("last_seen_at", "text")
        .addColumn("offline_at", "text")
        .addColumn("user_id", "text")
        .addColumn("user_access_key", "text")
        .addColumn("booked_by", "text")
        .addColumn("command_id", "text")
        .addColumn("last_lock_command_at", "text")
        .addColumn("attrs", "text", (c) => c.notNull())
        .addColumn("version", "integer", (c) => c.notNull())
        .addColumn("created_at", "text", (c) => c.notNull())
        .addColumn("updated_at", "text", (c) => c.notNull())
        .execute();
      await db.schema.createIndex("devices_location").on("devices").column("location_id").execute();
      await db.schema.createIndex("devices_operator").on("devices").column("operator_id").execute();
      await db.schema.createIndex("devices_timeout").on("devices").column("state_timeout_at").execute();
      await db.schema
        .createTable("commands")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("operator_id", "text", (c) => c.notNull().references("operators.id"))
        .addColumn("device_id", "text", (c) => c.notNull().references("devices.id"))
        .addColumn("name", "text", (c) => c.notNull())
        .addColumn("state_value", "text", (c) => c.notNull())
        .addColumn("state_reason", "text", (c) => c.notNull())
        .addColumn("state_timeout_at", "text")
        .addColumn("params", "text", (c) => c.notNull())
        .addColumn("requested_by", "text", (c) => c.notNull())
        .addColumn("events", "text", (c) => c.notNull())
        .addColumn("created_at", "text", (c) => c.notNull())
        .addColumn("updated_at", "text", (c) => c.notNull())
        .execute();
      await db.schema.createIndex("commands_device").on("commands").column("device_id").execute();
      await db.schema.createIndex("commands_timeout").on("commands").column("state_timeout_at").execute();
      await db.schema
        .createTable("applied_seqs")
        .addColumn("gateway_id", "text", (c) => c.notNull())
        .addColumn("seq", "integer", (c) => c.notNull())
        .addColumn("applied_at", "text", (c) => c.notNull())
        .addPrimaryKeyConstraint("applied_seqs_pk", ["gateway_id", "seq"])
        .execute();
    },
  },
  "002-hardware-events": {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable("hardware_events")
        .addColumn("gateway_id", "text", (c) => c.notNull())
        .addColumn("seq", "integer", (c) => c.notNull())
        .addColumn("device_id", "text")
        .addColumn("source", "text", (c) => c.notNull())
        .addColumn("event", "text", (c) => c.notNull())
        .addColumn("detail", "text", (c) => c.notNull())
        .addColumn("observed_at", "text", (c) => c.notNull())
        .addColumn("received_at", "text", (c) => c.notNull())
        .addPrimaryKeyConstraint("hardware_events_pk", ["gateway_id", "seq"])
        .execute();
      await db.schema
        .createIndex("hardware_events_device")
        .on("hardware_events")
        .column("device_id")
        .execute();
    },
  },
  "003-idempotency-keys": {
    async up(db: Kysely<unknown>) {
      // One row per Idempotency-Key, scoped to the caller and the route (cloud/idempotency/).
      await db.schema
        .createTable("idempotency_keys")
        .addColumn("operator_id", "text", (c) => c.notNull())
        .addColumn("client_id", "text", (c) => c.notNull())
        .addColumn("method", "text", (c) => c.notNull())
        .addColumn("route", "text", (c) => c.notNull())
        .addColumn("idempotency_key", "text", (c) => c.notNull())
        .addColumn("request_hash", "text", (c) => c.notNull())
        .addColumn("state", "text", (c) => c.notNull())
        .addColumn("holder", "text", (c) => c.notNull())
        .addColumn("lease_until", "text")
        .addColumn("response_status", "integer")
        .addColumn("response_headers", "text")
        .addColumn("response_body", "text")
        .addColumn("created_at", "text", (c) => c.notNull())
        .addColumn("expires_at", "text", (c) => c.notNull())
        .addPrimaryKeyConstraint("idempotency_keys_pk", [
          "operator_id",
          "client_id",
          "method",
          "route",
          "idempotency_key",
        ])
        .execute();
      await db.schema
        .createIndex("idempotency_keys_expires")
        .on("idempotency_keys")
        .column("expires_at")
        .execute();
    },
  },
  "004-hardware-truth": {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable("devices").addColumn("door_open", "integer").execute();
      await db.schema.alterTable("devices").addColumn("item_present", "integer").execute();
      await db.schema.alterTable("devices").addColumn("sensors_at", "text").execute();
      await db.schema.alterTable("gateways").addColumn("map_version", "text").execute();
      await db.schema.alterTable("commands").addColumn("wire_request", "text").execute();
      await db.schema
        .createTable("device_state_changes")
        .addColumn("gateway_id", "text", (c) => c.notNull())
        .addColumn("seq", "integer", (c) => c.notNull())
        .addColumn("device_id", "text", (c) => c.notNull())
        .addColumn("from_value", "text", (c) => c.notNull())
        .addColumn("to_value", "text", (c) => c.notNull())
        .addColumn("lock_state", "text", (c) => c.notNull())
        .addColumn("cause", "text", (c) => c.notNull())
        .addColumn("detail", "text", (c) => c.notNull())
        .addColumn("observed_at", "text", (c) => c.notNull())
        .addColumn("received_at", "text", (c) => c.notNull())
        .addPrimaryKeyConstraint("device_state_changes_pk", ["gateway_id", "seq"])
        .execute();
      await db.schema
        .createIndex("device_state_changes_device")
        .on("device_state_changes")
        .column("device_id")
        .execute();
    },
  },
  "005-external-users": externalUsersMigration,
  "006-sessions": sessionsMigration,
  "007-access-lists": accessListsMigration,
  "008-whitelists": whitelistsMigration,
  "009-webhooks": webhooksMigration,
  "010-key-sync": keySyncMigration,
  "011-photos": photosMigration,
  "012-outbox-identity": outboxIdentityMigration,
  "013-location-data-version": locationDataVersionMigration,
  "014-sensor-marks": sensorMarksMigration,
  "015-devices-by-gateway": devicesByGatewayMigration,
  "016-gateway-heartbeats": gatewayHeartbeatsMigration,
  "017-location-heartbeats": locationHeartbeatsMigration,
  "018-sign-up-safety": signUpSafetyMigration,
  "019-allowlist-versions": allowlistVersionsMigration,
  "020-photo-retention": photoRetentionMigration,
  "021-staff": staffMigration,
  "022-alarms": alarmsMigration,
  "023-audit-log": auditLogMigration,
  "024-console-live": consoleLiveMigration,
  "025-rider-token-generation": riderTokenGenerationMigration,
  "026-gateway-session": gatewaySessionMigration,
  "027-gateway-runtime": gatewayRuntimeMigration,
  "028-location-lock-order": locationLockOrderMigration,
};

export const migrationProvider: MigrationProvider = {
  getMigrations: () => Promise.resolve(migrations),
};
