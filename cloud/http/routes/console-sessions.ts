import type { FastifyInstance } from "fastify";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import { z } from "zod";
import { ErrorBody } from "../../../shared/api/common.ts";
import {
  ConsoleSession,
  ConsoleSessionList,
  ConsoleSessionsQuery,
} from "../../../shared/api/console-sessions.ts";
import { PAYMENT_STATUSES } from "../../../shared/domain/payment-machine.ts";
import type { SessionService } from "../../sessions/session-service.ts";
import { operatorFor, staffOrigin, staffPrincipal } from "../../staff/staff-principal.ts";
import { staffSessionOf } from "../console-guard.ts";
import { ANY_ROUTE_ERRORS, BODY_ERRORS } from "../error-responses.ts";
import { PathId } from "../path-id.ts";

const errors = { ...ANY_ROUTE_ERRORS, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody };
const OperatorQuery = z.strictObject({ operator_id: z.string().min(1).max(100).optional() });
const IdParams = z.strictObject({ id: PathId });

const EndBody = z.strictObject({
  without_fee: z.boolean(),
  reason: z.string().trim().min(1).max(2_000).optional(),
});
const Ended = z.object({
  session_id: z.string(),
  fee: z.string().nullable(),
  payment: z.object({ id: z.string(), status: z.enum(PAYMENT_STATUSES) }),
});
const PaymentStatusBody = z.strictObject({ status: z.enum(PAYMENT_STATUSES) });
const PaymentMoved = z.object({ from: z.enum(PAYMENT_STATUSES), to: z.enum(PAYMENT_STATUSES) });

/**
 * The console's sessions and payments (docs/decisions/console.md): reads for every role, a forced end and
 * a payment's status for those who act, through the session service as the staff member.
 */
export function registerConsoleSessionsRoutes(app: FastifyInstance, sessions: SessionService) {
  const r = app.withTypeProvider<ZodTypeProvider>();
  // Bearer tokens do not apply: the console guard reads the session cookie.
  const config = { public: true };

  r.get("/console/api/sessions", {
    config,
    schema: {
      hide: true,
      querystring: ConsoleSessionsQuery,
      response: { 200: ConsoleSessionList, ...errors },
    },
    handler: (request) => {
      const signed = staffSessionOf(request);
      const { operator_id, ...query } = request.query;
      return sessions.listConsole(staffPrincipal(signed, operatorFor(signed, operator_id), "read"), query);
    },
  });

  r.get("/console/api/sessions/:id", {
    config,
    schema: {
      hide: true,
      params: IdParams,
      querystring: OperatorQuery,
      response: { 200: ConsoleSession, ...errors },
    },
    handler: (request) => {
      const signed = staffSessionOf(request);
      const principal = staffPrincipal(signed, operatorFor(signed, request.query.operator_id), "read");
      return sessions.getConsole(principal, request.params.id);
    },
  });

  r.post("/console/api/sessions/:id/end", {
    config,
    schema: {
      hide: true,
      params: IdParams,
      querystring: OperatorQuery,
      body: EndBody,
      response: { 200: Ended, ...errors, ...BODY_ERRORS, 503: ErrorBody },
    },
    handler: async (request) => {
      const signed = staffSessionOf(request);
      const principal = staffPrincipal(signed, operatorFor(signed, request.query.operator_id), "act");
      const { without_fee, reason } = request.body;
      const ended = await sessions.end(
        principal,
        request.params.id,
        { withoutFee: without_fee, ...(reason ? { comment: reason } : {}) },
        staffOrigin(signed, String(request.id)),
      );
      return {
        session_id: ended.sessionId,
        fee: ended.fee,
        payment: { id: ended.paymentId, status: ended.payment },
      };
    },
  });

  r.post("/console/api/payments/:id/status", {
    config,
    schema: {
      hide: true,
      params: IdParams,
      querystring: OperatorQuery,
      body: PaymentStatusBody,
      response: { 200: PaymentMoved, ...errors, ...BODY_ERRORS },
    },
    handler: (request) => {
      const signed = staffSessionOf(request);
      const principal = staffPrincipal(signed, operatorFor(signed, request.query.operator_id), "act");
      return sessions.markPayment(
        principal,
        request.params.id,
        request.body.status,
        staffOrigin(signed, String(request.id)),
      );
    },
  });
}
