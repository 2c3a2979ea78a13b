import {
  CONSOLE_CONNECTIONS,
  type ConsoleConnection,
  type GatewayPanel,
  type LocationSummary,
} from "../../shared/api/console-locations.ts";
import { AppError } from "../../shared/api/errors.ts";
import { deriveHealth, isOnline } from "../../shared/domain/health.ts";
import { operatorsSeenBy, type StaffScope, staffMay } from "../../shared/domain/staff-roles.ts";
import type { Clock } from "../../shared/time/clock.ts";
import { deviceRepository } from "../devices/device-repository.ts";
import { healthOf } from "../devices/present-device.ts";
import { aggregate } from "../locations/aggregates.ts";
import { parseLocationAttrs } from "../locations/location-attrs.ts";
import { locationName } from "../locations/present-location.ts";
import type { Db } from "../store/db.ts";
import type { LocationsTable } from "../store/schema.ts";
import { consoleLocationRepository, type GatewayRecord } from "./console-location-repository.ts";

export { CONSOLE_CONNECTIONS };

export type LocationFilter = { text?: string; connection?: readonly ConsoleConnection[] };

type Summaries = Awaited<ReturnType<ReturnType<typeof deviceRepository>["summariesAt"]>>;

/**
 * The console's locations (docs/decisions/console.md): every location of the staff member's operator (a
 * superadmin: all) with the public API's aggregates (cloud/locations/aggregates.ts), and one location's
 * device grid and gateway panel. Reads only: every role of the operator may ask.
 */
export function createConsoleLocations(deps: { db: Db; clock: Clock }) {
  const { db, clock } = deps;
  const repo = consoleLocationRepository(db);
  const devices = deviceRepository(db);

  /** The devices' summaries of `rows`, read per operator as the public list reads them. */
  async function summariesOf(rows: readonly LocationsTable[]): Promise<Summaries> {
    const byOperator = new Map<string, string[]>();
    for (const r of rows) byOperator.set(r.operator_id, [...(byOperator.get(r.operator_id) ?? []), r.id]);
    const all: Summaries = new Map();
    for (const [operatorId, ids] of byOperator)
      for (const [id, list] of await devices.summariesAt(ids, operatorId)) all.set(id, list);
    return all;
  }

  function summarise(
    row: LocationsTable,
    summaries: Summaries,
    outages: Map<string, string>,
  ): LocationSummary {
    const agg = aggregate(summaries.get(row.id) ?? [], clock.now());
    const confirmed = agg.connection === "offline" && outages.get(row.id) === agg.offline_since;
    return {
      id: row.id,
      operator_id: row.operator_id,
      code: row.code,
      label: row.label,
      name: locationName(row.code, row.label),
      type: row.type,
      address: parseLocationAttrs(row.attrs).address,
      latitude: row.latitude,
      longitude: row.longitude,
      connection: confirmed ? "outage" : agg.connection,
      offline_since: agg.offline_since,
      devices: { available: agg.available, online: agg.online, total: agg.total },
    };
  }

  return {
    async list(staff: StaffScope, filter: LocationFilter = {}): Promise<LocationSummary[]> {
      const rows = await repo.locationsOf(operatorsSeenBy(staff));
      const [summaries, outages] = [await summariesOf(rows), await repo.latestOutages(rows.map((r) => r.id))];
      const text = filter.text?.trim().toLowerCase() ?? "";
      return rows
        .map((row) => summarise(row, summaries, outages))
        .filter((l) => filter.connection === undefined || filter.connection.includes(l.connection))
        .filter((l) => text === "" || [l.name, l.address].some((s) => s.toLowerCase().includes(text)));
    },

    async get(staff: StaffScope, id: string) {
      const row = await repo.locationIn(operatorsSeenBy(staff), id);
      if (!row) throw new AppError("ERRORS.NOT_FOUND", `Location ${id} not found`);
      const location = summarise(row, await summariesOf([row]), await repo.latestOutages([row.id]));
      const now = clock.now();
      const occupantShown = mayReadOccupant(staff, row.operator_id);
      const grid = (await devices.listAtLocation(row.operator_id, row.id)).map((d) => {
        const health = healthOf(d, now);
        return {
          id: d.id,
          alias: d.alias,
          type: d.type,
          state: { value: d.state.value, changed_at: d.state.changed_at, timeout_at: d.state.timeout_at },
          lock_state: d.lock_state,
          hardware_state: d.hardware_state,
          health: health?.health ?? null,
          dead_since: health?.dead_since ?? null,
          last_seen_at: d.last_seen_at,
          sleep_state: d.sleep_state,
          power_save_strategy: d.power_save_strategy,
          ...(occupantShown ? { occupant: d.user_id } : {}),
        };
      });
      const gateways = (await repo.gatewaysAt(row.id)).map((g) => gatewayPanel(g, now));
      // The cloud's clock: the page counts down to each timeout_at from it, not from the browser's.
      return { now: now.toISOString(), location, occupant_shown: occupantShown, devices: grid, gateways };
    },
  };
}

/**
 * Whether the staff member sees who occupies a device. Every role of the operator does, a viewer too: a
 * viewer reads everything of its operator (staff-roles.ts), and the occupant is the service's pseudonymous
 * user id, what the sessions a viewer reads name anyway.
 */
export function mayReadOccupant(staff: StaffScope, operatorId: string): boolean {
  return staffMay(staff, "read", operatorId);
}

/**
 * A gateway as the cloud knows it. Its health is its heartbeat's (an offline status makes it dead at once,
 * as for its devices). Its outbox's depth, its version and its start are what its latest heartbeat said
 * (migration 027); the uptime runs from that start to that heartbeat, both on the cloud's clock, so a
 * gateway gone quiet does not seem to run on. What a heartbeat did not say (an older gateway) stays null,
 * never guessed.
 */
function gatewayPanel(g: GatewayRecord, now: Date): GatewayPanel {
  const { gateway } = g;
  const health = deriveHealth(
    { last_seen_at: gateway.heartbeat_at, offline_at: gateway.online === 0 ? gateway.status_at : null },
    now,
  );
  const outbox = g.outboxes[0];
  return {
    id: gateway.id,
    online: isOnline(health),
    health: health?.health ?? null,
    status: gateway.online === null ? null : gateway.online === 1,
    status_at: gateway.status_at,
    last_heartbeat_at: gateway.heartbeat_at,
    outbox: outbox
      ? {
          id: outbox.outbox_id,
          unconfirmed_from: outbox.unconfirmed_from,
          reported_at: outbox.reported_at,
          last_applied_seq: g.lastApplied.get(outbox.outbox_id) ?? null,
          depth: gateway.outbox_depth,
        }
      : null,
    keys: g.keys
      ? {
          cloud_version: g.keys.version,
          held_version: g.keys.confirmed_version,
          confirmed_at: g.keys.confirmed_at,
        }
      : null,
    runtime_version: gateway.runtime_version,
    started_at: gateway.runtime_started_at,
    uptime_s: uptimeS(gateway.runtime_started_at, gateway.heartbeat_at),
  };
}

/** Whole seconds from the daemon's start to its latest heartbeat (null: either unknown). */
function uptimeS(startedAt: string | null, heartbeatAt: string | null): number | null {
  if (startedAt === null || heartbeatAt === null) return null;
  return Math.max(0, Math.round((Date.parse(heartbeatAt) - Date.parse(startedAt)) / 1000));
}

export type ConsoleLocations = ReturnType<typeof createConsoleLocations>;
