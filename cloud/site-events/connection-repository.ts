import { sql } from "kysely";
import { lastSeenAtJoined } from "../devices/device-repository.ts";
import type { Db } from "../store/db.ts";

/** Rows per insert of first sightings: 3 parameters each, well inside SQLite's 32,766. */
const FIRST_SIGHT_CHUNK = 1_000;
/** Locations whose devices one query reads. */
const LOCATION_CHUNK = 500;

/** A device as the connection watch judges it: when it was last seen, and what was last notified of it. */
export type WatchedDevice = {
  id: string;
  operator_id: string;
  location_id: string;
  alias: string;
  type: string;
  last_seen_at: string | null;
  offline_at: string | null;
  /** 1 online, 0 offline, null never notified */
  notified: number | null;
};

/** What the connection watch last notified of each device, and the location outages it confirmed. */
export function connectionRepository(db: Db) {
  /** Every device with its gateway's heartbeat and what was last notified, as a table to filter. */
  const watched = () =>
    db
      .selectFrom("devices")
      .leftJoin("device_connections as c", "c.device_id", "devices.id")
      .leftJoin("gateways as g", "g.id", "devices.gateway_id")
      .select([
        "devices.id",
        "devices.operator_id",
        "devices.location_id",
        "devices.alias",
        "devices.type",
        lastSeenAtJoined,
        "devices.offline_at",
        "c.online as notified",
      ])
      .as("w");

  return {
    /**
     * Inside a PostgreSQL transaction: its reads run without parallel workers (they would scan every
     * device on every core of a small machine while commands wait).
     */
    async withoutParallelWorkers(): Promise<void> {
      await sql`SET LOCAL max_parallel_workers_per_gather = 0`.execute(db);
    },

    /**
     * Devices never notified but heard of, and those whose notified state may no longer hold: online ones
     * last seen at or before `deadBefore` or reported offline since, offline ones seen after it or with an
     * offline report after `at` (a clock stepped back).
     */
    changeCandidates(at: string, deadBefore: string): Promise<WatchedDevice[]> {
      return db
        .selectFrom(watched())
        .selectAll()
        .where((eb) =>
          eb.or([
            eb.and([
              eb("w.notified", "is", null),
              eb.or([eb("w.last_seen_at", "is not", null), eb("w.offline_at", "is not", null)]),
            ]),
            eb.and([
              eb("w.notified", "=", 1),
              eb.or([
                eb("w.last_seen_at", "is", null),
                eb("w.last_seen_at", "<=", deadBefore),
                eb("w.offline_at", ">", eb.ref("w.last_seen_at")),
              ]),
            ]),
            eb.and([
              eb("w.notified", "=", 0),
              eb.or([eb("w.last_seen_at", ">", deadBefore), eb("w.offline_at", ">", at)]),
            ]),
          ]),
        )
        .execute();
    },

    /** Every device of the locations where devices were notified and none of them online. */
    async devicesOfDarkLocations(): Promise<WatchedDevice[]> {
      const dark = await db
        .selectFrom("devices")
        .innerJoin("device_connections as c", "c.device_id", "devices.id")
        .select("devices.location_id")
        .groupBy("devices.location_id")
        .having((eb) => eb.fn.max("c.online"), "=", 0)
        .execute();
      const ids = dark.map((r) => r.location_id);
      const devices: WatchedDevice[] = [];
      for (let k = 0; k < ids.length; k += LOCATION_CHUNK)
        devices.push(
          ...(await db
            .selectFrom(watched())
            .selectAll()
            .where("w.location_id", "in", ids.slice(k, k + LOCATION_CHUNK))
            .execute()),
        );
      return devices;
    },

    /** Notes the device as `online` only if `wasOnline` is still what was notified: false when it was not. */
    async claimChange(deviceId: string, wasOnline: boolean, online: boolean, at: string): Promise<boolean> {
      const res = await db
        .updateTable("device_connections")
        .set({ online: online ? 1 : 0, changed_at: at })
        .where("device_id", "=", deviceId)
        .where("online", "=", wasOnline ? 1 : 0)
        .executeTakeFirst();
      return res.numUpdatedRows > 0n;
    },

    /** The state each device was first seen in; a device noted meanwhile keeps its note. */
    async recordFirstSights(
      sights: readonly { deviceId: string; online: boolean }[],
      at: string,
    ): Promise<void> {
      const rows = sights.map((s) => ({ device_id: s.deviceId, online: s.online ? 1 : 0, changed_at: at }));
      // Written together: a fleet coming up for the first time is thousands of them.
      for (let k = 0; k < rows.length; k += FIRST_SIGHT_CHUNK)
        await db
          .insertInto("device_connections")
          .values(rows.slice(k, k + FIRST_SIGHT_CHUNK))
          .onConflict((oc) => oc.column("device_id").doNothing())
          .execute();
    },

    /** What was last notified of each device, by device id. */
    async notified(): Promise<Map<string, boolean>> {
      const rows = await db.selectFrom("device_connections").select(["device_id", "online"]).execute();
      return new Map(rows.map((r) => [r.device_id, r.online === 1]));
    },

    /** Records the outage once: false when it was already confirmed. */
    async confirmOutage(locationId: string, offlineSince: string, at: string): Promise<boolean> {
      const res = await db
        .insertInto("location_outages")
        .values({ location_id: locationId, offline_since: offlineSince, confirmed_at: at })
        .onConflict((oc) => oc.columns(["location_id", "offline_since"]).doNothing())
        .executeTakeFirst();
      return res.numInsertedOrUpdatedRows !== 0n;
    },

    /** Every confirmed outage, by location and start. */
    outages(): Promise<{ location_id: string; offline_since: string }[]> {
      return db
        .selectFrom("location_outages")
        .select(["location_id", "offline_since"])
        .orderBy("location_id")
        .orderBy("offline_since")
        .execute();
    },
  };
}

export type ConnectionRepository = ReturnType<typeof connectionRepository>;
