import type { Logger } from "pino";
import { DEAD_AFTER_MS, deriveHealth, isOnline, LONG_DEAD_AFTER_MS } from "../../shared/domain/health.ts";
import type { Clock } from "../../shared/time/clock.ts";
import { every } from "../../shared/time/every.ts";
import { type Db, isPostgres } from "../store/db.ts";
import { recordSiteEvent } from "../webhooks/site-events.ts";
import { connectionAlarm, firstSightAlarms, outageAlarm } from "./connection-alarms.ts";
import { type ConnectionRepository, connectionRepository } from "./connection-repository.ts";

/** A location offline this long is confirmed offline (spec: connection_confirmed, 2 hours or more). */
export const CONFIRMED_OFFLINE_MS = LONG_DEAD_AFTER_MS;

/**
 * Turns health, which is derived from time (shared/domain/health.ts), into site events: a device going
 * offline or online → `connection`; a location whose every device has been dead for 2 hours or more →
 * `connection_confirmed`, once per outage, each with its stored alarm (connection-alarms.ts). Each change
 * is claimed with a compare-and-set, so several replicas running the watch notify it once.
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
  function serially<T>(read: (q: ConnectionRepository) => Promise<T>): Promise<T> {
    if (!isPostgres(db)) return read(connectionRepository(db));
    return db.transaction().execute(async (trx) => {
      const q = connectionRepository(trx);
      await q.withoutParallelWorkers();
      return read(q);
    });
  }

  async function check(): Promise<number> {
    const now = clock.now();
    const at = now.toISOString();
    let events = 0;
    const deadBefore = new Date(now.getTime() - DEAD_AFTER_MS).toISOString();
    const firstSight: { deviceId: string; locationId: string; online: boolean }[] = [];
    for (const device of await serially((q) => q.changeCandidates(at, deadBefore))) {
      const view = deriveHealth(device, now);
      if (!view) continue;
      const online = isOnline(view);
      if (device.notified === null) {
        // First sight: the starting point, not a change.
        firstSight.push({ deviceId: device.id, locationId: device.location_id, online });
        continue;
      }
      if ((device.notified === 1) === online) continue;
      const claimed = await db.transaction().execute(async (trx) => {
        if (!(await connectionRepository(trx).claimChange(device.id, device.notified === 1, online, at)))
          return false;
        const place = { operatorId: device.operator_id, locationId: device.location_id, deviceId: device.id };
        const data = { alias: device.alias, device_type: device.type, online, since: view.dead_since ?? at };
        await recordSiteEvent(trx, { ...place, type: "connection", data, at: now });
        await connectionAlarm(trx, { ...place, online }, data, now);
        return true;
      });
      if (claimed) events++;
    }
    await connectionRepository(db).recordFirstSights(firstSight, at);
    await firstSightAlarms(db, firstSight, now);
    // Every device's notified state is its state now: a location can be offline only where none is online.
    const byLocation = new Map<string, { operatorId: string; deadSince: string[]; all: number }>();
    for (const device of await serially((q) => q.devicesOfDarkLocations())) {
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
        if (!(await connectionRepository(trx).confirmOutage(locationId, offlineSince, at))) return false;
        const place = { operatorId: loc.operatorId, locationId };
        const data = { offline_since: offlineSince };
        await recordSiteEvent(trx, { ...place, type: "connection_confirmed", deviceId: null, data, at: now });
        await outageAlarm(trx, place, data, now);
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
