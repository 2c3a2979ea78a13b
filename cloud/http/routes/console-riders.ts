import type { FastifyInstance } from "fastify";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import { z } from "zod";
import { ErrorBody } from "../../../shared/api/common.ts";
import {
  ConsoleRider,
  RevokedRiderTokens,
  RevokeRiderTokensBody,
} from "../../../shared/api/console-riders.ts";
import type { ConsoleRiders } from "../../console/console-riders.ts";
import { staffSessionOf } from "../console-guard.ts";
import { ANY_ROUTE_ERRORS, BODY_ERRORS } from "../error-responses.ts";
import { PathId } from "../path-id.ts";

const errors = { ...ANY_ROUTE_ERRORS, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody };
const IdParams = z.strictObject({ id: PathId });

/**
 * The console's riders (docs/decisions/console.md): a rider by the service's id for every role, revoking
 * their tokens for those who act.
 */
export function registerConsoleRiderRoutes(app: FastifyInstance, riders: ConsoleRiders) {
  const r = app.withTypeProvider<ZodTypeProvider>();
  // Bearer tokens do not apply: the console guard reads the session cookie.
  const config = { public: true };

  r.get("/console/api/riders/:id", {
    config,
    schema: { hide: true, params: IdParams, response: { 200: ConsoleRider, ...errors } },
    handler: (request) => riders.get(staffSessionOf(request), request.params.id),
  });

  r.post("/console/api/riders/:id/revoke-tokens", {
    config,
    schema: {
      hide: true,
      params: IdParams,
      body: RevokeRiderTokensBody,
      response: { 200: RevokedRiderTokens, ...errors, ...BODY_ERRORS },
    },
    handler: (request) =>
      riders.revokeTokens(
        staffSessionOf(request),
        request.params.id,
        request.body.reason,
        String(request.id),
      ),
  });
}
