import { sql } from "kysely";
import type { Logger } from "pino";
import { DEAD_AFTER_MS, deriveHealth, isOnline, LONG_DEAD_AFTER_MS } from "../../shared/domain/health.ts";
import type { Clock } from "../../shared/time/clock.ts";
import { every } from "../../shared/time/every.ts";
import { lastSeenAtJoined } from "../devices/device-repository.ts";
import { type Db, isPostgres } from "../store/db.ts";
import { recordSiteEvent } from "../webhooks/site-events.ts";

/** A location offline this long is confirmed offline (spec: connection_confirmed, 2 hours or more). */
export const CONFIRMED_OFFLINE_MS = LONG_DEAD_AFTER_MS;

/** Rows per insert of first sightings: 3 parameters each, well inside SQLite's 32,766. */
const FIRST_SIGHT_CHUNK = 1_000;
/** Locations whose devices one query reads. */
const LOCATION_CHUNK = 500;

type WatchedDevice = {
  id: string;
  operator_id: string;
  location_id: string;
  alias: string;
  type: string;
  last_seen_at: string | null;
  offline_at: string | null;
  notified: number | null;
};

/**
 * Turns health, which is derived from time (shared/domain/health.ts), into site events: a device going
 * offline or online → `connection`; a location whose every device has been dead for 2 hours or more →
 * `connection_confirmed`, once per outage. Each change is claimed with a compare-and-set, so several
 * replicas running the watch notify it once.
 *
 * Each round reads only the devices whose state may differ from what was last notified (health's rules as
 * a filter in SQL; `deriveHealth` decides for each) and the devices of locations where none is notified
 * online: a fleet's 160,000 devices read and judged every 15 s held the event loop for a second.
 */
export function createConnectionWatch(deps: { db: Db; clock: Clock; log: Logger; everyMs?: number }) {
  const { db, clock, log } = deps;

  /**
   * Runs a round's reads without parallel workers on PostgreSQL: they scan every device, and a parallel
   * scan of a fleet's 160,000 took both cores of the 2-core machine for half a second each round, which
   * every command in flight waited for (bench:fleet, 10,000 gateways). One core does it a little slower.
   */
  function serially<T>(read: (q: Db) => Promise<T>): Promise<T> {
    if (!isPostgres(db)) return read(db);
    return db.transaction().execute(async (trx) => {
      await sql`SET LOCAL max_parallel_workers_per_gather = 0`.execute(trx);
      return read(trx);
    });
  }

  /** Every device with its gateway's heartbeat and what was last notified, as a table to filter. */
  const watched = (q: Db) =>
    q
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

  /**
   * Devices never notified but heard of, and those whose notified state may no longer hold: online ones
   * last seen 30 s ago or more or reported offline since, offline ones seen within 30 s or with an
   * offline report still ahead (a clock stepped back). A superset of what `deriveHealth` changes.
   */
  function candidates(q: Db, now: Date): Promise<WatchedDevice[]> {
    const at = now.toISOString();
    const deadBefore = new Date(now.getTime() - DEAD_AFTER_MS).toISOString();
    return q
      .selectFrom(watched(q))
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
  }

  /** Every device of the locations where devices were notified and none of them online. */
  async function devicesOfDarkLocations(q: Db): Promise<WatchedDevice[]> {
    const dark = await q
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
        ...(await q
          .selectFrom(watched(q))
          .selectAll()
          .where("w.location_id", "in", ids.slice(k, k + LOCATION_CHUNK))
          .execute()),
      );
    return devices;
  }

  async function check(): Promise<number> {
    const now = clock.now();
    const at = now.toISOString();
    let events = 0;
    const firstSight: { device_id: string; online: number; changed_at: string }[] = [];
    for (const device of await serially((q) => candidates(q, now))) {
      const view = deriveHealth(device, now);
      if (!view) continue;
      const online = isOnline(view);
      if (device.notified === null) {
        // First sight: the starting point, not a change.
        firstSight.push({ device_id: device.id, online: online ? 1 : 0, changed_at: at });
        continue;
      }
      if ((device.notified === 1) === online) continue;
      const claimed = await db.transaction().execute(async (trx) => {
        const res = await trx
          .updateTable("device_connections")
          .set({ online: online ? 1 : 0, changed_at: at })
          .where("device_id", "=", device.id)
          .where("online", "=", device.notified ?? 0)
          .executeTakeFirst();
        if (res.numUpdatedRows === 0n) return false;
        await recordSiteEvent(trx, {
          operatorId: device.operator_id,
          type: "connection",
          locationId: device.location_id,
          deviceId: device.id,
          data: { alias: device.alias, device_type: device.type, online, since: view.dead_since ?? at },
          at: now,
        });
        return true;
      });
      if (claimed) events++;
    }
    // Written together: a fleet coming up for the first time is thousands of them.
    for (let k = 0; k < firstSight.length; k += FIRST_SIGHT_CHUNK)
      await db
        .insertInto("device_connections")
        .values(firstSight.slice(k, k + FIRST_SIGHT_CHUNK))
        .onConflict((oc) => oc.column("device_id").doNothing())
        .execute();
    // Every device's notified state is its state now: a location can be offline only where none is online.
    const byLocation = new Map<string, { operatorId: string; deadSince: string[]; all: number }>();
    for (const device of await serially(devicesOfDarkLocations)) {
      const view = deriveHealth(device, now);
      if (!view) continue;
      const loc = byLocation.get(device.location_id) ?? {
        operatorId: device.operator_id,
        deadSince: [],
        all: 0,
      };
      byLocation.set(device.location_id, loc);
      loc.all++;
      if (view.dead_since) loc.deadSince.push(view.dead_since);
    }
    for (const [locationId, loc] of byLocation) {
      // Offline means every device known there is dead; the outage began when the last one died.
      if (loc.deadSince.length !== loc.all) continue;
      const offlineSince = loc.deadSince.sort().at(-1) ?? at;
      if (now.getTime() - Date.parse(offlineSince) < CONFIRMED_OFFLINE_MS) continue;
      const confirmed = await db.transaction().execute(async (trx) => {
        const res = await trx
          .insertInto("location_outages")
          .values({ location_id: locationId, offline_since: offlineSince, confirmed_at: at })
          .onConflict((oc) => oc.columns(["location_id", "offline_since"]).doNothing())
          .executeTakeFirst();
        if (res.numInsertedOrUpdatedRows === 0n) return false;
        await recordSiteEvent(trx, {
          operatorId: loc.operatorId,
          type: "connection_confirmed",
          locationId,
          deviceId: null,
          data: { offline_since: offlineSince },
          at: now,
        });
        return true;
      });
      if (confirmed) events++;
    }
    return events;
  }

  const rounds = every(clock, deps.everyMs ?? 15_000, check, (err) =>
    log.error({ err }, "connection watch failed"),
  );
  return { check, start: rounds.start, stop: rounds.stop };
}
