import type { FastifyInstance } from "fastify";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import { z } from "zod";
import { ErrorBody } from "../../../shared/api/common.ts";
import { DeviceList } from "../../../shared/api/device.ts";
import { EmptyCollection, LocationAudit, OrganizationList } from "../../../shared/api/location-links.ts";
import type { LocationLinks } from "../../locations/location-links.ts";
import { principalOf } from "../authenticate.ts";
import { ANY_ROUTE_ERRORS, PATH_PARAM_ERRORS } from "../error-responses.ts";
import { PathId } from "../path-id.ts";

const params = z.object({ id: PathId });
const errors = { ...ANY_ROUTE_ERRORS, ...PATH_PARAM_ERRORS, 401: ErrorBody, 404: ErrorBody };
const base = "/location/v1/locations/:id";
const uriOf = (id: string, sub: string) => `/location/v1/locations/${id}/${sub}`;

/** Read-only resources the location resource links to (docs/decisions/http.md). */
export function registerLocationLinkRoutes(app: FastifyInstance, links: LocationLinks) {
  const r = app.withTypeProvider<ZodTypeProvider>();

  // Collections the service keeps nothing in: present so their links resolve, always empty.
  for (const [sub, what] of [
    ["subscriptions", "subscriptions"],
    ["descriptions", "descriptions"],
    ["external-devices", "external devices"],
  ] as const) {
    r.get(`${base}/${sub}`, {
      schema: {
        tags: ["locations"],
        summary: `A location's ${what} (none are kept; always empty)`,
        params,
        response: { 200: EmptyCollection, ...errors },
      },
      handler: async (request) => {
        await links.exists(principalOf(request), request.params.id);
        return { data: [], uri: uriOf(request.params.id, sub) };
      },
    });
  }

  r.get(`${base}/rental-devices`, {
    schema: {
      tags: ["locations"],
      summary: "A location's rental devices (deprecated, like rental_devices)",
      params,
      response: { 200: DeviceList, ...errors },
    },
    handler: async (request) => ({
      data: await links.rentalDevices(principalOf(request), request.params.id),
      uri: uriOf(request.params.id, "rental-devices"),
    }),
  });

  r.get(`${base}/organizations`, {
    schema: {
      tags: ["locations"],
      summary:
        "A location's organisations (deprecated: use the owner, operator, reseller and distributor ids)",
      description: "The ids are restricted fields: without RESTRICTED_FIELDS the list is empty.",
      params,
      response: { 200: OrganizationList, ...errors },
    },
    handler: async (request) => ({
      data: await links.organizations(principalOf(request), request.params.id),
      uri: uriOf(request.params.id, "organizations"),
    }),
  });

  r.get(`${base}/audit`, {
    schema: {
      tags: ["locations"],
      summary: "A location's audit record (restricted: RESTRICTED_FIELDS)",
      params,
      response: { 200: LocationAudit, ...errors, 403: ErrorBody },
    },
    handler: (request) => links.audit(principalOf(request), request.params.id),
  });
}
