import type { FastifyInstance } from "fastify";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import { z } from "zod";
import { ErrorBody } from "../../../shared/api/common.ts";
import { WhitelistList } from "../../../shared/api/location-links.ts";
import { ANY_ROUTE_ERRORS, PATH_PARAM_ERRORS } from "../error-responses.ts";
import { PathId } from "../path-id.ts";

/**
 * GET the whitelists of a location (spec: Whitelist; a location detail's `whitelists.uri`). Whitelists are
 * not kept yet, so the list is empty; like the spec's route it has no 404 (200 "filtered by the caller's
 * access": another operator's or an unknown location lists nothing).
 */
export function registerWhitelistRoutes(app: FastifyInstance) {
  const r = app.withTypeProvider<ZodTypeProvider>();
  r.get("/whitelist/v1/locations/:location_id/whitelists", {
    schema: {
      tags: ["whitelists"],
      summary: "List the whitelists of a location (filtered by the caller's access)",
      params: z.object({ location_id: PathId }),
      response: { 200: WhitelistList, ...ANY_ROUTE_ERRORS, ...PATH_PARAM_ERRORS, 401: ErrorBody },
    },
    handler: (request) => ({
      data: [],
      uri: `/whitelist/v1/locations/${request.params.location_id}/whitelists`,
    }),
  });
}
