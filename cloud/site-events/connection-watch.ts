import type { Logger } from "pino";
import type { Clock } from "../../shared/clock.ts";
import { deriveHealth, isOnline, LONG_DEAD_AFTER_MS } from "../../shared/domain/health.ts";
import { every } from "../../shared/every.ts";
import { lastSeenAtJoined } from "../devices/device-repository.ts";
import type { Db } from "../store/db.ts";
import { recordSiteEvent } from "../webhooks/site-events.ts";

/** A location offline this long is confirmed offline (spec: connection_confirmed, 2 hours or more). */
export const CONFIRMED_OFFLINE_MS = LONG_DEAD_AFTER_MS;

/** Rows per insert of first sightings: 3 parameters each, well inside SQLite's 32,766. */
const FIRST_SIGHT_CHUNK = 1_000;
/** Devices read per query. */
const PAGE = 2_000;

/**
 * Turns health, which is derived from time (shared/domain/health.ts), into site events: a device going
 * offline or online → `connection`; a location whose every device has been dead for 2 hours or more →
 * `connection_confirmed`, once per outage. Each change is claimed with a compare-and-set, so several
 * replicas running the watch notify it once.
 */
export function createConnectionWatch(deps: {
  db: Db;
  clock: Clock;
  log: Logger;
  everyMs?: number;
  /** Devices read per query. */
  pageSize?: number;
}) {
  const { db, clock, log } = deps;
  const pageSize = deps.pageSize ?? PAGE;

  /**
   * Every device with its gateway's heartbeat and what was last notified, a page at a time in id order:
   * a fleet's 160,000 devices read at once held the event loop (and every request) for a second.
   */
  async function* allDevices() {
    let after = "";
    for (;;) {
      const page = await db
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
        .where("devices.id", ">", after)
        .orderBy("devices.id")
        .limit(pageSize)
        .execute();
      yield* page;
      const last = page.at(-1);
      if (!last || page.length < pageSize) return;
      after = last.id;
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
  }

  async function check(): Promise<number> {
    const now = clock.now();
    const at = now.toISOString();
    let events = 0;
    const byLocation = new Map<string, { operatorId: string; deadSince: string[]; all: number }>();
    const firstSight: { device_id: string; online: number; changed_at: string }[] = [];
    for await (const d of allDevices()) {
      const view = deriveHealth(d, now);
      if (!view) continue;
      const online = isOnline(view);
      const loc = byLocation.get(d.location_id) ?? { operatorId: d.operator_id, deadSince: [], all: 0 };
      byLocation.set(d.location_id, loc);
      loc.all++;
      if (view.dead_since) loc.deadSince.push(view.dead_since);
      if (d.notified === null) {
        // First sight: the starting point, not a change.
        firstSight.push({ device_id: d.id, online: online ? 1 : 0, changed_at: at });
        continue;
      }
      if ((d.notified === 1) === online) continue;
      const claimed = await db.transaction().execute(async (trx) => {
        const res = await trx
          .updateTable("device_connections")
          .set({ online: online ? 1 : 0, changed_at: at })
          .where("device_id", "=", d.id)
          .where("online", "=", d.notified ?? 0)
          .executeTakeFirst();
        if (res.numUpdatedRows === 0n) return false;
        await recordSiteEvent(trx, {
          operatorId: d.operator_id,
          type: "connection",
          locationId: d.location_id,
          deviceId: d.id,
          data: { alias: d.alias, device_type: d.type, online, since: view.dead_since ?? at },
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
