import type { FastifyInstance, FastifyReply } from "fastify";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import { z } from "zod";
import { ErrorBody } from "../../../shared/api/common.ts";
import { AppError } from "../../../shared/api/errors.ts";
import {
  LocationDetail,
  LocationList,
  LocationPatch,
  PublicAreaFeatureCollection,
  PublicAreaList,
} from "../../../shared/api/location.ts";
import { requestOrigin } from "../../audit/audit-log.ts";
import type { LocationService } from "../../locations/location-service.ts";
import { principalOf } from "../authenticate.ts";
import { ANY_ROUTE_ERRORS, BODY_ERRORS, PATH_PARAM_ERRORS } from "../error-responses.ts";
import { PathId } from "../path-id.ts";

const Include = z.enum(["resources"]).optional().describe("Supported value: resources");

const ListQuery = z.strictObject({
  tag: z
    .union([z.string(), z.array(z.string())])
    .optional()
    .describe("Repeatable; a location must carry every tag given"),
  lat_lng: z
    .string()
    .regex(/^\s*-?\d+(\.\d+)?\s*,\s*-?\d+(\.\d+)?\s*$/, "must be 'latitude,longitude'")
    .refine((s) => {
      const [lat, lng] = s.split(",").map(Number) as [number, number];
      return Math.abs(lat) <= 90 && Math.abs(lng) <= 180;
    }, "latitude must be within ±90 and longitude within ±180")
    .optional(),
  // Checked only with lat_lng (radiusOf): without it the spec ignores radius, whatever its value.
  radius: z
    .union([z.string(), z.array(z.string())])
    .optional()
    .describe("Metres, a non-negative number; ignored (whatever its value) without lat_lng"),
  include: Include,
});

const RADIUS = /^\d+(\.\d+)?$/;

/** The radius in metres, read only when lat_lng is given. */
function radiusOf(radius: string | string[] | undefined): number | undefined {
  if (radius === undefined) return undefined;
  if (typeof radius !== "string" || !RADIUS.test(radius)) {
    throw new AppError(
      "ERRORS.VALIDATION_FAILED",
      "querystring.radius: must be a non-negative number of metres",
      { fields: ["querystring.radius"] },
    );
  }
  return Number(radius);
}

/** Whether an If-None-Match header names `etag` (weak comparison: a W/ prefix is ignored), or is `*`. */
export function ifNoneMatch(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  return header.split(",").some((t) => {
    const tag = t.trim();
    return tag === "*" || tag.replace(/^W\//, "") === etag;
  });
}

const IdParams = z.object({ id: PathId });
/**
 * Reads answer no 403: every client sees all of its operator's locations, and another operator's is not
 * found. Lists answer no 404 (spec: GET locations 400, 403, 500).
 */
const listErrors = { ...ANY_ROUTE_ERRORS, 401: ErrorBody };
const errors = { ...listErrors, 404: ErrorBody };

export function registerLocationRoutes(app: FastifyInstance, locations: LocationService) {
  const r = app.withTypeProvider<ZodTypeProvider>();

  r.get("/location/v1/locations", {
    schema: {
      tags: ["locations"],
      summary: "List locations",
      querystring: ListQuery,
      response: {
        200: LocationList,
        304: z.null().describe("Not modified: the ETag given in If-None-Match is current"),
        ...listErrors,
      },
    },
    handler: async (request, reply) => {
      const q = request.query;
      const tags = q.tag === undefined ? [] : Array.isArray(q.tag) ? q.tag : [q.tag];
      const near = q.lat_lng
        ? (() => {
            const [lat, lng] = q.lat_lng.split(",").map(Number) as [number, number];
            const radiusM = radiusOf(q.radius);
            return { lat, lng, ...(radiusM !== undefined ? { radiusM } : {}) };
          })()
        : undefined;
      const list = await locations.list(principalOf(request), {
        tags,
        near,
        includeResources: q.include === "resources",
      });
      // Pollers that send back the ETag get a 304 without the body (RFC 9110 §13.1.2).
      reply.header("etag", list.etag);
      // No payload at all: one serialised as `null` went out as `content-length: 4` with no body (a 304 has
      // none), and a client reading that keep-alive connection waited for four bytes that never came.
      if (ifNoneMatch(request.headers["if-none-match"], list.etag))
        return (reply as FastifyReply).code(304).send();
      // Already serialised: sent as is, past the response schema it was built to.
      return (reply as FastifyReply).type("application/json; charset=utf-8").send(list.body);
    },
  });

  r.get("/location/v1/locations/:id", {
    schema: {
      tags: ["locations"],
      summary: "Get a location",
      params: IdParams,
      querystring: z.strictObject({ include: Include }),
      response: { 200: LocationDetail, ...errors, ...PATH_PARAM_ERRORS },
    },
    handler: (request) =>
      locations.get(principalOf(request), request.params.id, request.query.include === "resources"),
  });

  r.patch("/location/v1/locations/:id", {
    schema: {
      tags: ["locations"],
      summary: "Update a location (all-or-nothing; each field needs its permission)",
      params: IdParams,
      body: LocationPatch,
      response: {
        204: z.null().describe("Updated"),
        ...errors,
        403: ErrorBody,
        ...PATH_PARAM_ERRORS,
        ...BODY_ERRORS,
        503: ErrorBody,
      },
    },
    handler: async (request, reply) => {
      const principal = principalOf(request);
      const origin = requestOrigin(principal, String(request.id));
      await locations.patch(principal, request.params.id, request.body, origin);
      return reply.code(204).send(null);
    },
  });

  r.get("/location/v1/public-areas", {
    schema: {
      tags: ["public areas"],
      summary: "List the caller's public areas",
      response: { 200: PublicAreaList, ...listErrors },
    },
    handler: async (request) => ({
      data: await locations.listPublicAreas(principalOf(request)),
      uri: "/location/v1/public-areas",
    }),
  });

  r.get("/location/v1/public-areas/:public_area_id/locations", {
    config: { public: true },
    schema: {
      tags: ["public areas"],
      summary: "Locations of a public area as GeoJSON (no auth)",
      security: [],
      params: z.object({ public_area_id: z.string().min(1).max(100) }),
      produces: ["application/geo+json"],
      response: {
        200: PublicAreaFeatureCollection,
        ...ANY_ROUTE_ERRORS,
        ...PATH_PARAM_ERRORS,
        404: ErrorBody,
      },
    },
    handler: async (request, reply) => {
      const body = await locations.publicAreaGeoJson(request.params.public_area_id);
      return reply.type("application/geo+json").send(body);
    },
  });
}
