import { AppError } from "../../shared/api/errors.ts";
import { type LocationPatch, type LocationType, TAGS_MAX_COUNT } from "../../shared/api/location.ts";
import { PATCH_PERMISSIONS } from "../../shared/api/permissions.ts";
import { misfitDevices } from "../../shared/domain/location-devices.ts";
import type { Clock } from "../../shared/time/clock.ts";
import { type AuditOrigin, fieldChanges, recordAudit, requestOrigin } from "../audit/audit-log.ts";
import { can, type Principal, requireClient } from "../auth/principal.ts";
import { deviceRepository } from "../devices/device-repository.ts";
import type { Db } from "../store/db.ts";
import { allowlistIdsAt } from "../whitelists/allowlists.ts";
import { aggregate } from "./aggregates.ts";
import { type LocationAttrs, parseLocationAttrs } from "./location-attrs.ts";
import {
  type LocationChange,
  type LocationHead,
  type LocationRecord,
  locationRepository,
} from "./location-repository.ts";
import { createLocationViews, type ListBody } from "./location-views.ts";
import { locationName, presentLocationDetail } from "./present-location.ts";

export type LocationQuery = {
  tags: string[];
  near?: { lat: number; lng: number; radiusM?: number };
  includeResources: boolean;
};

const EARTH_RADIUS_M = 6_371_008.8;
const MAX_PATCH_ATTEMPTS = 10;

/** Great-circle distance in metres (haversine). */
export function distanceM(a: { lat: number; lng: number }, b: { lat: number; lng: number }): number {
  const rad = Math.PI / 180;
  const dLat = (b.lat - a.lat) * rad;
  const dLng = (b.lng - a.lng) * rad;
  const h = Math.sin(dLat / 2) ** 2 + Math.cos(a.lat * rad) * Math.cos(b.lat * rad) * Math.sin(dLng / 2) ** 2;
  return 2 * EARTH_RADIUS_M * Math.asin(Math.min(1, Math.sqrt(h)));
}

/** The locations a list query picks, in its order: by code, or nearest first when `near` is given. */
export function pickLocations<H extends Pick<LocationHead, "tags" | "latitude" | "longitude">>(
  heads: readonly H[],
  q: Pick<LocationQuery, "tags" | "near">,
): H[] {
  let rows = [...heads];
  if (q.tags.length > 0) {
    rows = rows.filter((r) => {
      const tags = JSON.parse(r.tags) as string[];
      return q.tags.every((t) => tags.includes(t));
    });
  }
  const near = q.near;
  if (!near) return rows;
  return rows
    .map((r) => ({ r, d: distanceM(near, { lat: r.latitude, lng: r.longitude }) }))
    .filter((x) => near.radiusM === undefined || x.d <= near.radiusM)
    .sort((x, y) => x.d - y.d)
    .map((x) => x.r);
}

/** The caller's location; another operator's answers exactly as a missing one (BOLA: S12). */
export async function findOwnedLocation(db: Db, principal: Principal, id: string): Promise<LocationRecord> {
  const row = await locationRepository(db).findOwned(principal.operatorId, id);
  if (!row) throw new AppError("ERRORS.NOT_FOUND", `Location ${id} not found`);
  return row;
}

export function createLocationService(deps: { db: Db; clock: Clock }) {
  const { db, clock } = deps;
  const devices = deviceRepository(db);
  const locations = locationRepository(db);
  const views = createLocationViews({ db, clock });

  /** A new type must fit the devices the location holds: a location of lockers cannot become BIKE_DOCKS. */
  async function assertHoldsFit(locationId: string, type: LocationType) {
    const misfits = misfitDevices(type, await devices.typesAt(locationId));
    if (misfits.length > 0) {
      throw new AppError(
        "ERRORS.VALIDATION_FAILED",
        `body.type: a ${type} location cannot hold the location's ${misfits.join(", ")} devices`,
        { fields: ["body.type"] },
      );
    }
  }

  return {
    /** The list body, served from views kept current by data version and health (location-views.ts). */
    async list(principal: Principal, q: LocationQuery): Promise<ListBody> {
      const filtered = q.tags.length > 0 || q.near !== undefined;
      const heads = await views.heads(principal, filtered);
      const picked = filtered ? pickLocations(heads, q) : heads;
      return views.body(principal, picked, {
        includeResources: q.includeResources,
        queryKey: JSON.stringify([q.tags, q.near ?? null]),
      });
    },

    async get(principal: Principal, id: string, includeResources: boolean) {
      const row = await findOwnedLocation(db, principal, id);
      const summaries = await devices.summariesAt([row.id]);
      const agg = aggregate(summaries.get(row.id) ?? [], clock.now());
      const allowlistIds = (await allowlistIdsAt(db, [row.id])).get(row.id) ?? [];
      return presentLocationDetail({ row, agg, allowlistIds, principal, includeResources });
    },

    /**
     * All-or-nothing PATCH: every field's permission is checked before anything is written (S15).
     * A location moved between tenants is a manifest action, so organization ids here are data only.
     * The audit entry, written with the change, names the fields whose value changed.
     */
    async patch(
      principal: Principal,
      id: string,
      patch: LocationPatch,
      origin: AuditOrigin = requestOrigin(principal),
    ) {
      requireClient(principal, "PATCH location");
      const forbidden = Object.keys(patch).filter((field) => {
        const needed = PATCH_PERMISSIONS[field];
        return needed !== null && needed !== undefined && !can(principal, needed);
      });
      if (forbidden.length > 0) {
        throw new AppError("ERRORS.FORBIDDEN", `Missing permission to change: ${forbidden.join(", ")}`, {
          fields: forbidden,
        });
      }
      // attrs and tags are read-modify-write JSON columns: write only if nobody changed them since we
      // read them (compare-and-swap), otherwise re-read and re-apply, so concurrent PATCHes of
      // different fields never lose each other's changes.
      for (let attempt = 0; attempt < MAX_PATCH_ATTEMPTS; attempt++) {
        const row = await findOwnedLocation(db, principal, id);
        if (patch.type !== undefined && patch.type !== row.type) await assertHoldsFit(row.id, patch.type);
        const attrs = parseLocationAttrs(row.attrs);
        let tags = JSON.parse(row.tags) as string[];
        const columns: Omit<LocationChange, "tags" | "attrs"> = {};
        for (const [field, value] of Object.entries(patch)) {
          if (value === undefined) continue;
          switch (field) {
            case "code":
            case "label":
            case "type":
            case "latitude":
            case "longitude":
              Object.assign(columns, { [field]: value });
              break;
            case "public_tags":
              tags = applyTagChange(tags, value as TagChange, field);
              break;
            case "private_tags":
              attrs.private_tags = applyTagChange(attrs.private_tags, value as TagChange, field);
              break;
            default:
              Object.assign(attrs, { [field]: value });
          }
        }
        const change = { ...columns, tags: JSON.stringify(tags), attrs: JSON.stringify(attrs) };
        const now = clock.now();
        const written = await db.transaction().execute(async (trx) => {
          if (!(await locationRepository(trx).updateIfUnchanged(row, change, now.toISOString())))
            return false;
          const changes = patchedFields(row, { ...columns, tags, attrs }, Object.keys(patch));
          const subject = { type: "location", id: row.id };
          await recordAudit(
            trx,
            origin,
            { operatorId: row.operator_id, action: "location.patch", subject, changes },
            now,
          );
          return true;
        });
        if (written) return;
      }
      throw new AppError(
        "ERRORS.SERVICE_UNAVAILABLE",
        "The location is being changed by another request; try again",
        {},
        { "retry-after": "1" },
      );
    },

    async listPublicAreas(principal: Principal) {
      const rows = await locations.publicAreasOf(principal.operatorId);
      return rows.map((r) => ({
        id: r.id,
        name: r.name,
        uri: `/location/v1/public-areas/${r.id}/locations`,
      }));
    },

    /** The public map (no auth): only public fields, GeoJSON coordinates are [longitude, latitude]. */
    async publicAreaGeoJson(publicAreaId: string) {
      if (!(await locations.publicAreaExists(publicAreaId)))
        throw new AppError("ERRORS.NOT_FOUND", `Public area ${publicAreaId} not found`);
      const rows = await locations.inPublicArea(publicAreaId);
      const summaries = await devices.summariesAt(rows.map((r) => r.id));
      const now = clock.now();
      return {
        type: "FeatureCollection" as const,
        features: rows.map((r) => {
          const agg = aggregate(summaries.get(r.id) ?? [], now);
          const attrs = parseLocationAttrs(r.attrs);
          return {
            type: "Feature" as const,
            geometry: { type: "Point" as const, coordinates: [r.longitude, r.latitude] as [number, number] },
            properties: {
              code: r.code,
              address: attrs.address,
              name: locationName(r.code, r.label),
              label: r.label,
              tags: JSON.parse(r.tags) as string[],
              parking: { total: agg.total, available: agg.available, online: agg.online },
              icon: { png2x: "", svg: "", png: "" },
              renting: {
                available_docks: agg.available,
                online_docks: agg.online,
                total_docks: agg.total,
                available_rentals: 0,
              },
            },
          };
        }),
      };
    },
  };
}

export type LocationService = ReturnType<typeof createLocationService>;

type TagChange = { add: string[]; remove: string[] };

const COLUMN_FIELDS = ["code", "label", "type", "latitude", "longitude"] as const;

type ColumnChange = Omit<LocationChange, "tags" | "attrs">;

/** Each PATCH field as it was and as it is written: columns, public tags, and the attrs fields. */
function patchedFields(
  row: LocationRecord,
  next: ColumnChange & { tags: string[]; attrs: LocationAttrs },
  fields: string[],
) {
  const view = (cols: ColumnChange, tags: string[], attrs: LocationAttrs) => {
    const out: Record<string, unknown> = { ...attrs, public_tags: tags };
    for (const f of COLUMN_FIELDS) out[f] = cols[f] ?? row[f];
    return out;
  };
  const before = view(row, JSON.parse(row.tags) as string[], parseLocationAttrs(row.attrs));
  return fieldChanges(before, view(next, next.tags, next.attrs), fields);
}

/** A change may not take a location past TAGS_MAX_COUNT tags (one that already is may still shrink). */
function applyTagChange(tags: string[], change: TagChange, field: string): string[] {
  const next = tags.filter((t) => !change.remove.includes(t));
  for (const t of change.add) if (!next.includes(t)) next.push(t);
  if (next.length > TAGS_MAX_COUNT && next.length > tags.length) {
    throw new AppError(
      "ERRORS.VALIDATION_FAILED",
      `body.${field}: a location carries at most ${TAGS_MAX_COUNT} ${field.replace("_", " ")}`,
      { fields: [`body.${field}`] },
    );
  }
  return next;
}
