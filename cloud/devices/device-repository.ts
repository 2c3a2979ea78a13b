import { sql } from "kysely";
import type { HardwareState } from "../../shared/api/device.ts";
import type { DeviceType } from "../../shared/domain/device-types.ts";
import type { Db, Executor } from "../store/db.ts";
import type { DeviceRecord } from "../store/device-record.ts";
import { fromJson, toJson } from "../store/json-column.ts";
import type { DevicesTable } from "../store/schema.ts";
import { type DeviceAttrs, parseDeviceAttrs } from "../store/tables/device-attrs.ts";

/**
 * When a device was last seen: when its gateway's latest heartbeat arrived if that heartbeat reached it
 * and is later, when it was seen before otherwise. One row per gateway is what a heartbeat writes.
 */
export const lastSeenAt = sql<string | null>`coalesce((select g.heartbeat_at from gateways as g
  where g.id = devices.gateway_id and devices.reachable = 1
    and g.heartbeat_at > coalesce(devices.seen_at, '')), devices.seen_at)`.as("last_seen_at");

/** `lastSeenAt` where the query joins the device's gateway as `g`: reading many devices, one join beats a lookup each. */
export const lastSeenAtJoined = sql<string | null>`coalesce(case when devices.reachable = 1
  and g.heartbeat_at > coalesce(devices.seen_at, '') then g.heartbeat_at end, devices.seen_at)`.as(
  "last_seen_at",
);

/** What the hardware reported: written whatever the state machine makes of it. */
export type SensorReading = Partial<
  Pick<DeviceRecord, "lock_state" | "door_open" | "item_present" | "sensors_at" | "sleep_state">
>;

/** What a command or a machine step changes; `compareAndSet` adds the version and `updated_at`. */
export type DeviceChanges = SensorReading &
  Partial<
    Pick<
      DeviceRecord,
      | "state"
      | "command_id"
      | "last_lock_command_at"
      | "user_id"
      | "user_access_key"
      | "booked_by"
      | "sensor_marks"
    >
  >;

/** The columns location aggregates read: a location list reads many devices, so no more than these. */
const SUMMARY_COLUMNS = [
  "location_id",
  "type",
  "alias",
  "state_value",
  "state_changed_at",
  "hardware_state",
  "offline_at",
  "created_at",
] as const;
export type DeviceSummary = Pick<DevicesTable, (typeof SUMMARY_COLUMNS)[number]> & {
  last_seen_at: string | null;
};

/** How a gateway reaches a device: one entry of the gateway's device map. */
export type DeviceWiring = Pick<DeviceRecord, "type" | "alias" | "has_camera" | "power_save_strategy"> & {
  device_id: string;
  bus: DeviceAttrs["bus"];
};

const flag = (n: number | null): boolean | null => (n === null ? null : n === 1);
const bit = (b: boolean | null): number | null => (b === null ? null : b ? 1 : 0);

function toRecord(row: DevicesTable & { last_seen_at: string | null }): DeviceRecord {
  const {
    state_value,
    state_changed_at,
    state_timeout_at,
    state_restore,
    attrs,
    seen_at,
    reachable,
    ...rest
  } = row;
  return {
    ...rest,
    state: {
      value: state_value,
      changed_at: state_changed_at,
      timeout_at: state_timeout_at,
      restore: state_restore === null ? null : fromJson(state_restore),
    },
    attrs: parseDeviceAttrs(attrs),
    has_camera: row.has_camera === 1,
    door_open: flag(row.door_open),
    item_present: flag(row.item_present),
  };
}

function toColumns(changes: DeviceChanges): Partial<DevicesTable> {
  const { state, door_open, item_present, ...same } = changes;
  const set: Partial<DevicesTable> = { ...same };
  if (state) {
    set.state_value = state.value;
    set.state_changed_at = state.changed_at;
    set.state_timeout_at = state.timeout_at;
    set.state_restore = state.restore ? toJson(state.restore) : null;
  }
  if (door_open !== undefined) set.door_open = bit(door_open);
  if (item_present !== undefined) set.item_present = bit(item_present);
  return set;
}

/** The columns `writeLocked` writes: what a report or a machine step may change, with the version. */
const LOCKED_COLUMNS = [
  "state_value",
  "state_changed_at",
  "state_timeout_at",
  "state_restore",
  "lock_state",
  "door_open",
  "item_present",
  "sensors_at",
  "sleep_state",
  "sensor_marks",
  "command_id",
  "last_lock_command_at",
  "user_id",
  "user_access_key",
  "booked_by",
  "version",
  "updated_at",
] as const;
const INT_COLUMNS = new Set<string>(["door_open", "item_present", "version"]);

export function deviceRepository(db: Executor) {
  const byId = (id: string) => db.selectFrom("devices").selectAll().select(lastSeenAt).where("id", "=", id);

  return {
    async find(id: string): Promise<DeviceRecord | undefined> {
      const row = await byId(id).executeTakeFirst();
      return row && toRecord(row);
    },

    /** Another operator's device is exactly as missing as one that does not exist (BOLA). */
    async findForOperator(operatorId: string, id: string): Promise<DeviceRecord | undefined> {
      const row = await byId(id).where("operator_id", "=", operatorId).executeTakeFirst();
      return row && toRecord(row);
    },

    async listAtLocation(operatorId: string, locationId: string): Promise<DeviceRecord[]> {
      const rows = await db
        .selectFrom("devices")
        .selectAll()
        .select(lastSeenAt)
        .where("location_id", "=", locationId)
        .where("operator_id", "=", operatorId)
        .orderBy("alias")
        .orderBy("id")
        .execute();
      return rows.map(toRecord);
    },

    /** A gateway reports only about the devices it drives (S30). */
    async isDrivenBy(gatewayId: string, id: string): Promise<boolean> {
      const row = await db
        .selectFrom("devices")
        .select("id")
        .where("id", "=", id)
        .where("gateway_id", "=", gatewayId)
        .executeTakeFirst();
      return row !== undefined;
    },

    /**
     * Writes the changes only if nobody wrote the device since `device` was read, and bumps its version.
     * Returns the device as written, or null when another writer came first.
     */
    async compareAndSet(
      device: DeviceRecord,
      changes: DeviceChanges,
      now: Date,
    ): Promise<DeviceRecord | null> {
      const version = device.version + 1;
      const updated_at = now.toISOString();
      const res = await db
        .updateTable("devices")
        .set({ ...toColumns(changes), version, updated_at })
        .where("id", "=", device.id)
        .where("version", "=", device.version)
        .executeTakeFirst();
      return res.numUpdatedRows > 0n ? { ...device, ...changes, version, updated_at } : null;
    },

    /**
     * The devices among `ids`, locked for writing in id order (PostgreSQL: every writer of several
     * devices takes them in that order, so two never wait for each other). For a batch of gateway
     * reports (report-batch.ts); a device's own writes take only its row, then its location's.
     */
    async lockInIdOrder(ids: readonly string[]): Promise<DeviceRecord[]> {
      if (ids.length === 0) return [];
      const rows = await db
        .selectFrom("devices")
        .selectAll()
        .select(lastSeenAt)
        .where("id", "in", [...ids])
        .orderBy("id")
        .forNoKeyUpdate()
        .execute();
      return rows.map(toRecord);
    },

    /** A reading with no lock state has nothing to reconcile: it is kept as it comes. */
    async recordReading(id: string, reading: SensorReading): Promise<void> {
      await db.updateTable("devices").set(toColumns(reading)).where("id", "=", id).execute();
    },

    /**
     * `recordReading` with a compare-and-set on the device's version (bumped; `updated_at`, which dates
     * the settings, is not): false when another writer came first.
     */
    async recordReadingIf(
      device: DeviceRecord,
      reading: SensorReading & Pick<DeviceChanges, "sensor_marks">,
    ): Promise<boolean> {
      const res = await db
        .updateTable("devices")
        .set({ ...toColumns(reading), version: device.version + 1 })
        .where("id", "=", device.id)
        .where("version", "=", device.version)
        .executeTakeFirst();
      return res.numUpdatedRows > 0n;
    },

    /** The gateway's GUARD was heard from at `at` (its status said online). */
    async markGuardSeen(gatewayId: string, at: string): Promise<void> {
      await db
        .updateTable("devices")
        .set({ seen_at: at, offline_at: null })
        .where("gateway_id", "=", gatewayId)
        .where("type", "=", "GUARD")
        .execute();
    },

    /**
     * The bus devices of the gateway whose reachability its heartbeat changes: one it no longer reaches
     * keeps the gateway's previous heartbeat as when it was last seen. Writes nothing when none changed,
     * which is nearly always; the gateway's `heartbeat_at` is written after this (heartbeat-intake.ts).
     */
    async markReachable(gatewayId: string, reachableIds: readonly string[]): Promise<void> {
      const previous = sql<
        string | null
      >`(select g.heartbeat_at from gateways as g where g.id = ${gatewayId})`;
      await db
        .updateTable("devices")
        .set((eb) => ({
          reachable: sql<number>`1 - reachable`,
          seen_at: eb
            .case()
            .when(sql<boolean>`reachable = 1 and ${previous} > coalesce(seen_at, '')`)
            .then(previous)
            .else(eb.ref("seen_at"))
            .end(),
        }))
        .where("gateway_id", "=", gatewayId)
        .where("type", "<>", "GUARD")
        .where(
          "reachable",
          "<>",
          reachableIds.length
            ? sql<number>`case when id in (${sql.join(reachableIds)}) then 1 else 0 end`
            : sql<number>`0`,
        )
        .execute();
    },

    /** The gateway went offline at `at`, and every device it drives with it. */
    async markOffline(gatewayId: string, at: string): Promise<void> {
      await db.updateTable("devices").set({ offline_at: at }).where("gateway_id", "=", gatewayId).execute();
    },

    /** The device's hardware condition: anything but NORMAL makes it unavailable. */
    async setHardwareState(id: string, state: HardwareState): Promise<void> {
      await db.updateTable("devices").set({ hardware_state: state }).where("id", "=", id).execute();
    },

    /** Devices whose state ran out with no command driving them: bookings and door releases. */
    async idsPastDeadline(at: string, limit: number): Promise<string[]> {
      const rows = await db
        .selectFrom("devices")
        .select("id")
        .where("state_timeout_at", "<=", at)
        .where("command_id", "is", null)
        .limit(limit)
        .execute();
      return rows.map((r) => r.id);
    },

    /** In id order, so the same devices always make the same map (its version is a hash of it). */
    async wiringOf(gatewayId: string): Promise<DeviceWiring[]> {
      const rows = await db
        .selectFrom("devices")
        .select(["id", "type", "alias", "attrs", "has_camera", "power_save_strategy"])
        .where("gateway_id", "=", gatewayId)
        .orderBy("id")
        .execute();
      return rows.map((r) => ({
        device_id: r.id,
        type: r.type,
        alias: r.alias,
        bus: parseDeviceAttrs(r.attrs).bus,
        has_camera: r.has_camera === 1,
        power_save_strategy: r.power_save_strategy,
      }));
    },

    /**
     * Summaries of the devices of the given locations, by location. Listing many locations reads the
     * operator's devices in one indexed scan rather than binding a long IN list.
     */
    async summariesAt(
      locationIds: readonly string[],
      operatorId?: string,
    ): Promise<Map<string, DeviceSummary[]>> {
      const byLocation = new Map<string, DeviceSummary[]>();
      if (locationIds.length === 0) return byLocation;
      const wanted = new Set(locationIds);
      let q = db
        .selectFrom("devices")
        .leftJoin("gateways as g", "g.id", "devices.gateway_id")
        .select([...SUMMARY_COLUMNS.map((c) => `devices.${c}` as const), lastSeenAtJoined])
        .orderBy("devices.alias");
      q =
        operatorId && locationIds.length > 1
          ? q.where("devices.operator_id", "=", operatorId)
          : q.where("devices.location_id", "in", locationIds);
      const rows = (await q.execute()).filter((r) => wanted.has(r.location_id));
      for (const r of rows) {
        const list = byLocation.get(r.location_id);
        if (list) list.push(r);
        else byLocation.set(r.location_id, [r]);
      }
      return byLocation;
    },

    async typesAt(locationId: string): Promise<DeviceType[]> {
      const rows = await db
        .selectFrom("devices")
        .select("type")
        .distinct()
        .where("location_id", "=", locationId)
        .execute();
      return rows.map((r) => r.type);
    },
  };
}

export type DeviceRepository = ReturnType<typeof deviceRepository>;

/**
 * Writes what a batch made of devices it holds locked (`deviceRepository().lockInIdOrder`): every column a report or a
 * machine step may change, from the record as the batch left it, in one statement, so each location's
 * `data_version` rises once for the batch. PostgreSQL only.
 */
export async function writeLockedDevices(db: Db, devices: readonly DeviceRecord[]): Promise<void> {
  if (devices.length === 0) return;
  const rows = devices.map((d) => ({
    id: d.id,
    version: d.version,
    updated_at: d.updated_at,
    ...toColumns({
      state: d.state,
      lock_state: d.lock_state,
      door_open: d.door_open,
      item_present: d.item_present,
      sensors_at: d.sensors_at,
      sleep_state: d.sleep_state,
      sensor_marks: d.sensor_marks,
      command_id: d.command_id,
      last_lock_command_at: d.last_lock_command_at,
      user_id: d.user_id,
      user_access_key: d.user_access_key,
      booked_by: d.booked_by,
    }),
  }));
  const text = LOCKED_COLUMNS.filter((c) => !INT_COLUMNS.has(c));
  const columns = LOCKED_COLUMNS.map((c) => sql`${sql.ref(c)} = x.${sql.ref(c)}`);
  const types = [
    sql`id text`,
    ...LOCKED_COLUMNS.map((c) => sql`${sql.ref(c)} ${sql.raw(text.includes(c) ? "text" : "integer")}`),
  ];
  await sql`UPDATE devices AS d SET ${sql.join(columns)}
    FROM json_to_recordset(${JSON.stringify(rows)}::json) AS x(${sql.join(types)})
    WHERE d.id = x.id`.execute(db);
}
