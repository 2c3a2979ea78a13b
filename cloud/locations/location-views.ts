import { createHash } from "node:crypto";
import { nextHealthChange } from "../../shared/domain/health.ts";
import type { Clock } from "../../shared/time/clock.ts";
import { LruMap } from "../auth/lru-map.ts";
import { can, type Principal } from "../auth/principal.ts";
import { deviceRepository } from "../devices/device-repository.ts";
import { changeStampOf } from "../store/change-stamp.ts";
import type { Db } from "../store/db.ts";
import { allowlistIdsAt } from "../whitelists/allowlists.ts";
import { aggregate } from "./aggregates.ts";
import { type LocationHead, locationRepository } from "./location-repository.ts";
import { presentLocation } from "./present-location.ts";

/** One location as a list shows it to one kind of caller, serialised, and how long it stays true. */
type View = {
  /** The location's data_version, heartbeat count and created_at it was made from. */
  version: string;
  heartbeats: string;
  createdAt: string;
  /** The clock reading it was made at and the first instant a device's health may change after it. */
  madeAt: number;
  validUntil: number;
  json: string;
  /** Unique in this process: names this exact view in a list body's memo key. */
  serial: number;
};

export type ListBody = { body: Buffer; etag: string };

/**
 * A list body and what it was assembled from: the views' serials, and, when every view was fresh for its
 * head, the heads themselves (the same array, as the heads kept on SQLite are), the view serial count then
 * and the span of clock readings all of them stay fresh in. While all four hold, it is still the answer.
 */
type Memo = {
  key: string;
  list: ListBody;
  picked: readonly LocationHead[] | null;
  serials: number;
  from: number;
  until: number;
};

const LIST_URI = "/location/v1/locations";
/** Operators × caller kinds whose views are kept, and list bodies (operator × kind × query) memoised. */
const VIEW_SETS = 64;
const BODIES = 256;
/** How many locations one refresh query names: well inside both stores' bound-parameter limits. */
const REFRESH_CHUNK = 500;

/**
 * Location list views kept per location and caller kind (restricted fields or not, resources or not).
 * Each request still reads every location's data_version and heartbeat count from the store (one light
 * query), so a change made by any writer or replica is seen at once; only locations whose version or count
 * moved, or whose devices' health has reached its next change since the view was made, are read and
 * presented again. The body
 * assembled from the views is memoised with its ETag, so an unchanged list costs one query and a copy.
 */
export function createLocationViews(deps: { db: Db; clock: Clock }) {
  const { db, clock } = deps;
  const devices = deviceRepository(db);
  const locations = locationRepository(db);
  const viewSets = new LruMap<string, Map<string, View>>(VIEW_SETS);
  const bodies = new LruMap<string, Memo>(BODIES);
  let serials = 0;
  // On SQLite, the heads last read per operator and query shape, with the store's change stamp read
  // before them: while the stamp stands, no row has changed, so the same heads are still the answer.
  const stamp = changeStampOf(db);
  const headSets = new LruMap<string, { stamp: string; heads: Promise<LocationHead[]> }>(VIEW_SETS);

  function fresh(v: View | undefined, head: LocationHead, t: number): v is View {
    return (
      v !== undefined &&
      v.version === head.data_version &&
      v.heartbeats === head.heartbeats &&
      v.createdAt === head.created_at &&
      v.madeAt <= t &&
      t < v.validUntil
    );
  }

  /** Reads and presents `ids` again. The location row is read before its devices: see below. */
  async function refresh(
    views: Map<string, View>,
    ids: string[],
    principal: Principal,
    includeResources: boolean,
  ) {
    for (let i = 0; i < ids.length; i += REFRESH_CHUNK) {
      const chunk = ids.slice(i, i + REFRESH_CHUNK);
      // A device write or heartbeat after this read moves the version or count past the one recorded
      // here, so the view it misses is refreshed on the next request; reading devices first could record
      // a stale view as new.
      const rows = await locations.versioned(principal.operatorId, chunk);
      const summaries = await devices.summariesAt(chunk, principal.operatorId);
      const allowlists = await allowlistIdsAt(db, chunk);
      const now = clock.now();
      for (const { data_version, heartbeats, ...row } of rows) {
        const devs = summaries.get(row.id) ?? [];
        let validUntil = Number.POSITIVE_INFINITY;
        for (const device of devs) validUntil = Math.min(validUntil, nextHealthChange(device, now));
        const location = presentLocation({
          row,
          agg: aggregate(devs, now),
          allowlistIds: allowlists.get(row.id) ?? [],
          principal,
          includeResources,
        });
        const old = views.get(row.id);
        // Two requests may refresh at once: never replace a view with one made from an older read.
        if (
          old &&
          old.createdAt === row.created_at &&
          (BigInt(old.version) > BigInt(data_version) || BigInt(old.heartbeats) > BigInt(heartbeats))
        )
          continue;
        views.set(row.id, {
          version: data_version,
          heartbeats,
          createdAt: row.created_at,
          madeAt: now.getTime(),
          validUntil,
          json: JSON.stringify(location),
          serial: ++serials,
        });
      }
    }
  }

  return {
    /**
     * Every location of the caller's operator, in the list's order, with what checks its view; the
     * columns a filter reads only when asked for (`filtered`): a row costs more than its SQL.
     */
    heads(principal: Principal, filtered: boolean): Promise<readonly LocationHead[]> {
      if (!stamp) return locations.heads(principal.operatorId, filtered);
      const key = `${principal.operatorId}|${filtered ? "f" : "-"}`;
      // Read before the query: a change after this reading moves the next one, whatever the query saw.
      const now = stamp();
      const kept = headSets.get(key);
      if (kept?.stamp === now) return kept.heads;
      const heads = locations.heads(principal.operatorId, filtered);
      headSets.set(key, { stamp: now, heads });
      heads.catch(() => {
        if (headSets.get(key)?.heads === heads) headSets.delete(key);
      });
      return heads;
    },

    /**
     * The list body of `picked` (heads already filtered and ordered) for this caller, with its ETag.
     * `queryKey` names the filter that picked them, so equal lists of equal queries share one body.
     */
    async body(
      principal: Principal,
      picked: readonly LocationHead[],
      opts: { includeResources: boolean; queryKey: string },
    ): Promise<ListBody> {
      const kind = `${can(principal, "RESTRICTED_FIELDS") ? "r" : "-"}${opts.includeResources ? "i" : "-"}`;
      const setKey = `${principal.operatorId}|${kind}`;
      let views = viewSets.get(setKey);
      if (!views) {
        views = new Map();
        viewSets.set(setKey, views);
      }
      const t = clock.now().getTime();
      const memoKey = `${setKey}|${opts.queryKey}`;
      const memo = bodies.get(memoKey);
      // The same heads, no view made since, and every view still fresh: the check below would pass.
      if (memo?.picked === picked && memo.serials === serials && memo.from <= t && t < memo.until)
        return memo.list;
      const stale = picked.filter((h) => !fresh(views.get(h.id), h, t)).map((h) => h.id);
      if (stale.length > 0) await refresh(views, stale, principal, opts.includeResources);

      const parts: View[] = [];
      let allFresh = true;
      let from = Number.NEGATIVE_INFINITY;
      let until = Number.POSITIVE_INFINITY;
      for (const h of picked) {
        const v = views.get(h.id);
        // Deleted between the two reads: the list is as of the head read, less what no longer exists.
        if (!v) continue;
        parts.push(v);
        allFresh &&= fresh(v, h, t);
        from = Math.max(from, v.madeAt);
        until = Math.min(until, v.validUntil);
      }
      const key = parts.map((v) => v.serial).join(",");
      const span = {
        picked: allFresh && parts.length === picked.length ? picked : null,
        serials,
        from,
        until,
      };
      if (memo?.key === key) {
        bodies.set(memoKey, { ...memo, ...span });
        return memo.list;
      }
      const body = Buffer.from(`{"data":[${parts.map((v) => v.json).join(",")}],"uri":"${LIST_URI}"}`);
      const list = { body, etag: `"${createHash("sha256").update(body).digest("base64url").slice(0, 27)}"` };
      bodies.set(memoKey, { key, list, ...span });
      return list;
    },
  };
}

export type LocationViews = ReturnType<typeof createLocationViews>;
