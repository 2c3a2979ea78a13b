import type { FastifyInstance } from "fastify";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import { z } from "zod";
import { ErrorBody } from "../../../shared/api/common.ts";
import {
  ConsoleWebhookEndpointList,
  ConsoleWebhookLog,
  ConsoleWebhookLogQuery,
  ConsoleWebhookQueued,
} from "../../../shared/api/console-webhooks.ts";
import type { ConsoleWebhooks } from "../../console/console-webhooks.ts";
import { staffSessionOf } from "../console-guard.ts";
import { ANY_ROUTE_ERRORS } from "../error-responses.ts";
import { PathId } from "../path-id.ts";

const errors = { ...ANY_ROUTE_ERRORS, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody };
const IdParams = z.strictObject({ id: PathId });
// A message id is `msg_` and 32 hex digits; anything else names no delivery (404).
const DeliveryParams = z.strictObject({ id: PathId, message_id: z.string().min(1).max(100) });

/**
 * The console's webhooks (docs/decisions/console.md): endpoints and delivery logs for every role, a replay
 * and a test event for those who act.
 */
export function registerConsoleWebhookRoutes(app: FastifyInstance, webhooks: ConsoleWebhooks) {
  const r = app.withTypeProvider<ZodTypeProvider>();
  // Bearer tokens do not apply: the console guard reads the session cookie.
  const config = { public: true };

  r.get("/console/api/webhooks", {
    config,
    schema: { hide: true, response: { 200: ConsoleWebhookEndpointList, ...errors } },
    handler: (request) => webhooks.list(staffSessionOf(request)),
  });

  r.get("/console/api/webhooks/:id", {
    config,
    schema: {
      hide: true,
      params: IdParams,
      querystring: ConsoleWebhookLogQuery,
      response: { 200: ConsoleWebhookLog, ...errors },
    },
    handler: (request) => webhooks.log(staffSessionOf(request), request.params.id, request.query),
  });

  r.post("/console/api/webhooks/:id/deliveries/:message_id/replay", {
    config,
    schema: { hide: true, params: DeliveryParams, response: { 200: ConsoleWebhookQueued, ...errors } },
    handler: (request) =>
      webhooks.replay(
        staffSessionOf(request),
        request.params.id,
        request.params.message_id,
        String(request.id),
      ),
  });

  r.post("/console/api/webhooks/:id/test-event", {
    config,
    schema: { hide: true, params: IdParams, response: { 200: ConsoleWebhookQueued, ...errors } },
    handler: (request) =>
      webhooks.sendTestEvent(staffSessionOf(request), request.params.id, String(request.id)),
  });
}
