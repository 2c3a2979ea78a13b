import type { FastifyInstance, FastifyReply } from "fastify";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import { z } from "zod";
import { ErrorBody } from "../../../shared/api/common.ts";
import {
  MAX_SESSIONS_LIMIT,
  Payment,
  PriceList,
  SessionsV1Query,
  SessionsV2Query,
  SessionV1,
  SessionV1List,
  SessionV2,
  SessionV2List,
} from "../../../shared/api/session.ts";
import { Uuid } from "../../../shared/api/uuid.ts";
import type { SessionService } from "../../sessions/session-service.ts";
import { principalOf } from "../authenticate.ts";
import { ANY_ROUTE_ERRORS, PATH_PARAM_ERRORS } from "../error-responses.ts";

const listErrors = { ...ANY_ROUTE_ERRORS, 401: ErrorBody };
const itemErrors = { ...listErrors, ...PATH_PARAM_ERRORS, 404: ErrorBody };

/**
 * The v1 session endpoints are deprecated (spec: Versioning): since 2026-01-01 (RFC 9745 Deprecation),
 * gone after 2026-12-31 (RFC 8594 Sunset), each pointing at its v2 replacement (Link successor-version).
 */
export const V1_DEPRECATED_AT = Date.parse("2026-01-01T00:00:00Z");
export const V1_SUNSET = "Thu, 31 Dec 2026 23:59:59 GMT";
const V2_LIST = "/session/v2/sessions";

function deprecate(reply: FastifyReply, successor: string) {
  reply
    .header("deprecation", `@${V1_DEPRECATED_AT / 1000}`)
    .header("sunset", V1_SUNSET)
    .header("link", `<${successor}>; rel="successor-version"`);
}
const V1_NOTE =
  "Deprecated: answers carry Deprecation, Sunset and Link (rel=successor-version) headers naming the v2 replacement.";

export function registerSessionRoutes(app: FastifyInstance, sessions: SessionService) {
  const r = app.withTypeProvider<ZodTypeProvider>();

  r.get(V2_LIST, {
    schema: {
      tags: ["sessions"],
      summary: "List sessions (cursor pagination)",
      description:
        "Newest first. An external user sees only their own sessions, an S2S client its operator's. " +
        `limit is 1–${MAX_SESSIONS_LIMIT}; pass the answer's pagination_token with the same filters for the next page ` +
        "(null on the last page); sessions created meanwhile never shift the pages still to come. " +
        "from/to (UTC days, inclusive) filter active sessions by start time, ended ones by end time, booked ones by booking time.",
      querystring: SessionsV2Query,
      response: { 200: SessionV2List, ...listErrors },
    },
    handler: (request) => sessions.listV2(principalOf(request), request.query),
  });

  r.get("/session/v2/users/:user_id/sessions/:session_id", {
    schema: {
      tags: ["sessions"],
      summary: "Get a session",
      params: z.object({ user_id: Uuid, session_id: Uuid }),
      response: { 200: SessionV2, ...itemErrors },
    },
    handler: (request) =>
      sessions.getV2(principalOf(request), request.params.user_id, request.params.session_id),
  });

  r.get("/session/v1/device-sessions", {
    schema: {
      tags: ["sessions v1 (deprecated)"],
      summary: "List sessions (deprecated: use GET /session/v2/sessions)",
      description: `${V1_NOTE} active=true lists active sessions by start time; active=false (default) ended ones by end time.`,
      deprecated: true,
      querystring: SessionsV1Query,
      response: { 200: SessionV1List, ...listErrors },
    },
    handler: async (request, reply) => {
      deprecate(reply, V2_LIST);
      return { data: await sessions.listV1(principalOf(request), request.query) };
    },
  });

  r.get("/session/v1/device-sessions/:session_id", {
    schema: {
      tags: ["sessions v1 (deprecated)"],
      summary: "Get a session (deprecated: use GET /session/v2/users/{user_id}/sessions/{session_id})",
      description: V1_NOTE,
      deprecated: true,
      params: z.object({ session_id: Uuid }),
      response: { 200: SessionV1, ...itemErrors },
    },
    handler: async (request, reply) => {
      deprecate(reply, V2_LIST);
      const session = await sessions.getV1(principalOf(request), request.params.session_id);
      deprecate(reply, `/session/v2/users/${session.user_id}/sessions/${request.params.session_id}`);
      return session;
    },
  });

  r.get("/session/v1/devices/:device_id/sessions", {
    schema: {
      tags: ["sessions v1 (deprecated)"],
      summary: "The device's current session (deprecated: use GET /session/v2/sessions)",
      description: `${V1_NOTE} The active session, else the latest one the caller may see; 404 when there is none.`,
      deprecated: true,
      params: z.object({ device_id: Uuid }),
      response: { 200: SessionV1, ...itemErrors },
    },
    handler: (request, reply) => {
      deprecate(reply, V2_LIST);
      return sessions.currentOnDeviceV1(principalOf(request), request.params.device_id);
    },
  });

  r.get("/session/v1/payments/:payment_id", {
    schema: {
      tags: ["sessions"],
      summary: "Get a session's payment (the uri of a v1 session's payment)",
      params: z.object({ payment_id: Uuid }),
      response: { 200: Payment, ...itemErrors },
    },
    handler: (request) => sessions.getPayment(principalOf(request), request.params.payment_id),
  });

  r.get("/location/v1/price-lists/:price_list_id", {
    schema: {
      tags: ["locations"],
      summary: "Get a price list (a device's price_list)",
      params: z.object({ price_list_id: Uuid }),
      response: { 200: PriceList, ...itemErrors },
    },
    handler: (request) => sessions.getPriceList(principalOf(request), request.params.price_list_id),
  });
}
