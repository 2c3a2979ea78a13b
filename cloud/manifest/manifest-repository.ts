import type { LocationStatus, LocationType } from "../../shared/api/location.ts";
import type { Permission } from "../../shared/api/permissions.ts";
import type { DeviceStateValue, LockState } from "../../shared/domain/device-machine.ts";
import type { DeviceType, PowerSaveStrategy } from "../../shared/domain/device-types.ts";
import type { Executor } from "../store/db.ts";
import { toJson } from "../store/json-column.ts";
import type { DeviceAttrs } from "../store/tables/device-attrs.ts";

/** What an upsert did: re-applying an unchanged manifest writes nothing at all (not even `updated_at`). */
export type Upserted = "created" | "updated" | "unchanged";

/** Whether a stored row differs from what the manifest declares now (`updated_at` aside: it follows change). */
function differs<T extends object>(stored: T, declared: Partial<T>): boolean {
  return Object.entries(declared).some(([k, v]) => k !== "updated_at" && stored[k as keyof T] !== v);
}

export type DeclaredClient = {
  client_id: string;
  operator_id: string;
  name: string;
  secret_hash: string;
  permissions: readonly Permission[];
};

export type DeclaredLocation = {
  id: string;
  operator_id: string;
  code: string;
  label: string;
  type: LocationType;
  status: LocationStatus;
  latitude: number;
  longitude: number;
  tags: readonly string[];
  /** The whole attrs object to store (the caller merges it over what was stored). */
  attrs: Record<string, unknown>;
};

export type DeclaredGateway = { id: string; operator_id: string; location_id: string; secret_hash: string };

export type DeclaredDevice = {
  id: string;
  operator_id: string;
  location_id: string;
  gateway_id: string;
  type: DeviceType;
  alias: string;
  code: string;
  hardware_id: string;
  has_camera: boolean;
  power_save_strategy: PowerSaveStrategy;
  attrs: DeviceAttrs;
};

/** A device's runtime state when the manifest first declares it; later applies never touch it. */
export type FreshDevice = { state_value: DeviceStateValue; lock_state: LockState; reachable: boolean };

/**
 * The site manifest's writes: each entity kind it declares is created when missing and updated when what
 * the manifest owns of it changed; what the running service owns (a device's state, a gateway's status) is
 * set only on creation. Nothing is ever deleted.
 */
export function manifestRepository(db: Executor) {
  return {
    async clientSecretHash(clientId: string): Promise<string | undefined> {
      const row = await db
        .selectFrom("api_clients")
        .select("secret_hash")
        .where("client_id", "=", clientId)
        .executeTakeFirst();
      return row?.secret_hash;
    },

    async gatewaySecretHash(gatewayId: string): Promise<string | undefined> {
      const row = await db
        .selectFrom("gateways")
        .select("secret_hash")
        .where("id", "=", gatewayId)
        .executeTakeFirst();
      return row?.secret_hash;
    },

    /** The location's stored attrs as they are (fields set elsewhere included); undefined when it is new. */
    async locationAttrs(locationId: string): Promise<Record<string, unknown> | undefined> {
      const row = await db
        .selectFrom("locations")
        .select("attrs")
        .where("id", "=", locationId)
        .executeTakeFirst();
      return row && (JSON.parse(row.attrs) as Record<string, unknown>);
    },

    async upsertOperator(o: { id: string; name: string }, ts: string): Promise<Upserted> {
      const stored = await db.selectFrom("operators").selectAll().where("id", "=", o.id).executeTakeFirst();
      if (!stored) {
        await db
          .insertInto("operators")
          .values({ ...o, created_at: ts })
          .execute();
        return "created";
      }
      const set = { name: o.name };
      if (!differs(stored, set)) return "unchanged";
      await db.updateTable("operators").set(set).where("id", "=", o.id).execute();
      return "updated";
    },

    async upsertApiClient(c: DeclaredClient, ts: string): Promise<Upserted> {
      const { client_id, permissions, ...rest } = c;
      const set = { ...rest, permissions: JSON.stringify(permissions) };
      const stored = await db
        .selectFrom("api_clients")
        .selectAll()
        .where("client_id", "=", client_id)
        .executeTakeFirst();
      if (!stored) {
        await db
          .insertInto("api_clients")
          .values({ client_id, ...set, created_at: ts })
          .execute();
        return "created";
      }
      if (!differs(stored, set)) return "unchanged";
      await db.updateTable("api_clients").set(set).where("client_id", "=", client_id).execute();
      return "updated";
    },

    async upsertLocation(l: DeclaredLocation, ts: string): Promise<Upserted> {
      const { id, tags, attrs, ...rest } = l;
      const set = { ...rest, tags: JSON.stringify(tags), attrs: JSON.stringify(attrs), updated_at: ts };
      const stored = await db.selectFrom("locations").selectAll().where("id", "=", id).executeTakeFirst();
      if (!stored) {
        await db
          .insertInto("locations")
          .values({ id, ...set, created_at: ts })
          .execute();
        return "created";
      }
      if (!differs(stored, set)) return "unchanged";
      await db.updateTable("locations").set(set).where("id", "=", id).execute();
      return "updated";
    },

    /** A new gateway has never been heard: no status yet. */
    async upsertGateway(g: DeclaredGateway, ts: string): Promise<Upserted> {
      const { id, ...set } = g;
      const stored = await db.selectFrom("gateways").selectAll().where("id", "=", id).executeTakeFirst();
      if (!stored) {
        await db
          .insertInto("gateways")
          .values({ id, ...set, created_at: ts, online: null, status_at: null })
          .execute();
        return "created";
      }
      if (!differs(stored, set)) return "unchanged";
      await db.updateTable("gateways").set(set).where("id", "=", id).execute();
      return "updated";
    },

    async upsertDevice(d: DeclaredDevice, fresh: FreshDevice, ts: string): Promise<Upserted> {
      const { id, has_camera, attrs, ...rest } = d;
      const set = { ...rest, has_camera: has_camera ? 1 : 0, attrs: toJson(attrs), updated_at: ts };
      const stored = await db.selectFrom("devices").selectAll().where("id", "=", id).executeTakeFirst();
      if (!stored) {
        await db
          .insertInto("devices")
          .values({ id, ...set, ...freshDevice(fresh, ts) })
          .execute();
        return "created";
      }
      if (!differs(stored, set)) return "unchanged";
      await db.updateTable("devices").set(set).where("id", "=", id).execute();
      return "updated";
    },

    async upsertPublicArea(a: { id: string; operator_id: string; name: string }): Promise<Upserted> {
      const { id, ...set } = a;
      const stored = await db.selectFrom("public_areas").selectAll().where("id", "=", id).executeTakeFirst();
      if (!stored) {
        await db.insertInto("public_areas").values(a).execute();
        return "created";
      }
      if (!differs(stored, set)) return "unchanged";
      await db.updateTable("public_areas").set(set).where("id", "=", id).execute();
      return "updated";
    },

    /** Puts a location in a public area; false when it already was. */
    async linkPublicArea(publicAreaId: string, locationId: string): Promise<boolean> {
      const link = await db
        .selectFrom("public_area_locations")
        .select("location_id")
        .where("public_area_id", "=", publicAreaId)
        .where("location_id", "=", locationId)
        .executeTakeFirst();
      if (link) return false;
      await db
        .insertInto("public_area_locations")
        .values({ public_area_id: publicAreaId, location_id: locationId })
        .execute();
      return true;
    },

    /** The locations of a public area, in id order. */
    async publicAreaLocations(publicAreaId: string): Promise<string[]> {
      const rows = await db
        .selectFrom("public_area_locations")
        .select("location_id")
        .where("public_area_id", "=", publicAreaId)
        .orderBy("location_id")
        .execute();
      return rows.map((r) => r.location_id);
    },

    /**
     * Every row the manifests' entity kinds hold, as stored and in key order: what an apply left behind,
     * for a check that re-applying wrote nothing.
     */
    async stored() {
      return {
        operators: await db.selectFrom("operators").selectAll().orderBy("id").execute(),
        clients: await db.selectFrom("api_clients").selectAll().orderBy("client_id").execute(),
        locations: await db.selectFrom("locations").selectAll().orderBy("id").execute(),
        gateways: await db.selectFrom("gateways").selectAll().orderBy("id").execute(),
        devices: await db.selectFrom("devices").selectAll().orderBy("id").execute(),
        publicAreas: await db.selectFrom("public_areas").selectAll().orderBy("id").execute(),
        areaLocations: await db
          .selectFrom("public_area_locations")
          .selectAll()
          .orderBy("public_area_id")
          .orderBy("location_id")
          .execute(),
      };
    },
  };
}

/** The runtime columns of a device new to the store: ready, idle, nobody in it. */
function freshDevice(f: FreshDevice, ts: string) {
  return {
    state_value: f.state_value,
    state_changed_at: ts,
    state_timeout_at: null,
    state_restore: null,
    lock_state: f.lock_state,
    hardware_state: "NORMAL" as const,
    sleep_state: "" as const,
    seen_at: null,
    reachable: f.reachable ? 1 : 0,
    offline_at: null,
    user_id: null,
    user_access_key: null,
    booked_by: null,
    command_id: null,
    last_lock_command_at: null,
    version: 0,
    created_at: ts,
  };
}
