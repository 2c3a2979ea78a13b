import { type SelectQueryBuilder, sql } from "kysely";
import type { Executor } from "../store/db.ts";
import type { Database, LocationsTable } from "../store/schema.ts";

export type LocationRecord = LocationsTable;

/** What a list reads of every location first: enough to filter and order it and to check its view. */
export type LocationHead = {
  id: string;
  created_at: string;
  data_version: string;
  /** Heartbeats its gateways have sent: they move last_seen_at, and so health, without a data version. */
  heartbeats: string;
  /** Read only for a filtered list. */
  tags: string;
  latitude: number;
  longitude: number;
};

/** A location with its data version and heartbeat count, both as text (they outgrow a JS number). */
export type VersionedLocation = LocationRecord & { data_version: string; heartbeats: string };

/** The columns a PATCH may write; tags and attrs are the JSON the caller built. */
export type LocationChange = Partial<
  Pick<LocationRecord, "code" | "label" | "type" | "latitude" | "longitude">
> &
  Pick<LocationRecord, "tags" | "attrs">;

/** Locations and the public areas that show them. Every lookup of a caller's location names its operator. */
export function locationRepository(db: Executor) {
  return {
    /** The operator's location; another operator's is as missing as one that does not exist. */
    findOwned(operatorId: string, id: string): Promise<LocationRecord | undefined> {
      return db
        .selectFrom("locations")
        .selectAll()
        .where("id", "=", id)
        .where("operator_id", "=", operatorId)
        .executeTakeFirst();
    },

    /**
     * Writes `change` only if the location's tags and attrs are still those of `read` (compare-and-swap:
     * concurrent writers of these JSON columns never lose each other's changes). False when another came first.
     */
    async updateIfUnchanged(read: LocationRecord, change: LocationChange, at: string): Promise<boolean> {
      const res = await db
        .updateTable("locations")
        .set({ ...change, updated_at: at })
        .where("id", "=", read.id)
        .where("operator_id", "=", read.operator_id)
        .where("tags", "=", read.tags)
        .where("attrs", "=", read.attrs)
        .executeTakeFirst();
      return res.numUpdatedRows > 0n;
    },

    /**
     * Every location of the operator, ordered by code (ties by id), with what checks its view; the code
     * and the columns a filter reads only when `filtered`.
     */
    heads(operatorId: string, filtered: boolean): Promise<LocationHead[]> {
      const q = withHeartbeats(db.selectFrom("locations"))
        .select(["locations.id", "created_at"])
        .select(sql<string>`cast(data_version as text)`.as("data_version"))
        .where("operator_id", "=", operatorId)
        .orderBy("code")
        .orderBy("locations.id");
      if (filtered) return q.select(["code", "tags", "latitude", "longitude"]).execute();
      return q.execute() as Promise<LocationHead[]>;
    },

    /** The operator's locations among `ids` (in no particular order), with their versions. */
    versioned(operatorId: string, ids: readonly string[]): Promise<VersionedLocation[]> {
      return withHeartbeats(db.selectFrom("locations"))
        .selectAll("locations")
        .select(sql<string>`cast(data_version as text)`.as("data_version"))
        .where("locations.id", "in", ids)
        .where("operator_id", "=", operatorId)
        .execute();
    },

    /** The operator's public areas, by id. */
    publicAreasOf(operatorId: string): Promise<{ id: string; name: string }[]> {
      return db
        .selectFrom("public_areas")
        .select(["id", "name"])
        .where("operator_id", "=", operatorId)
        .orderBy("id")
        .execute();
    },

    async publicAreaExists(id: string): Promise<boolean> {
      const row = await db.selectFrom("public_areas").select("id").where("id", "=", id).executeTakeFirst();
      return row !== undefined;
    },

    /** The locations a public area shows, by code. */
    inPublicArea(publicAreaId: string): Promise<LocationRecord[]> {
      return db
        .selectFrom("locations")
        .innerJoin("public_area_locations", "public_area_locations.location_id", "locations.id")
        .selectAll("locations")
        .where("public_area_locations.public_area_id", "=", publicAreaId)
        .orderBy("locations.code")
        .execute();
    },
  };
}

/** Each location's heartbeat count (none yet: 0) as `heartbeats`, text as the version is. */
function withHeartbeats(q: SelectQueryBuilder<Database, "locations", object>) {
  return q
    .leftJoin("location_heartbeats as hb", "hb.location_id", "locations.id")
    .select(sql<string>`cast(coalesce(hb.beats, 0) as text)`.as("heartbeats"));
}

export type LocationRepository = ReturnType<typeof locationRepository>;
