import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import { z } from "zod";
import { ErrorBody } from "../../../shared/api/common.ts";
import type { ConsoleWhitelist, ConsoleWhitelistList } from "../../../shared/api/console-whitelists.ts";
import { AppError } from "../../../shared/api/errors.ts";
import type { EntityModification } from "../../../shared/api/whitelist.ts";
import type { ConsoleWhitelists } from "../../console/console-whitelists.ts";
import { requireRole } from "../../console/staff-principal.ts";
import type { SignedIn } from "../../staff/console-sessions.ts";
import { staffOrigin, staffPrincipal } from "../../staff/staff-principal.ts";
import type { WhitelistService } from "../../whitelists/whitelist-service.ts";
import { staffSessionOf } from "../console-guard.ts";
import { errorBody } from "../error-body.ts";
import { ANY_ROUTE_ERRORS, BODY_ERRORS } from "../error-responses.ts";
import { PathId } from "../path-id.ts";

const errors = { ...ANY_ROUTE_ERRORS, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody };
const IdParams = z.strictObject({ id: PathId });
/** A card's id is checked by the whitelist service, as a batch item's is (ERRORS.INVALID_CARD_ID). */
const CardParams = z.strictObject({ id: PathId, card_id: z.string().min(1).max(100) });
/**
 * A card as the public ADD takes an entity (`id_type` filled in): any object here, checked item-wise by the
 * whitelist service with the same shared schema, so the console's refusals are the API's.
 */
const CardBody = z.record(z.string(), z.unknown());
// Bearer tokens do not apply: the console guard reads the session cookie.
const config = { public: true };

/**
 * The console's whitelists (docs/decisions/console.md): reads for every role; adding and removing a card
 * for those who act, through the whitelist service as a client of the whitelist's operator, so the key
 * sync, tenancy and validation are the public API's and the audit log names the staff member.
 */
export function registerConsoleWhitelistRoutes(
  app: FastifyInstance,
  deps: { views: ConsoleWhitelists; whitelists: WhitelistService },
) {
  const r = app.withTypeProvider<ZodTypeProvider>();

  /** The principal for the whitelist `id`: its owner's for a superadmin; another operator's is a 404. */
  async function principalFor(signed: SignedIn, id: string, action: "read" | "act") {
    const operatorId = await deps.views.operatorFor(signed.staff.operatorId, id);
    if (operatorId === undefined) throw new AppError("ERRORS.NOT_FOUND", `Whitelist ${id} not found`);
    return staffPrincipal(signed, operatorId, action);
  }

  /** One card's change through the service's batch: 204, or its refusal in the spec's error body. */
  async function changeCard(
    request: FastifyRequest,
    reply: FastifyReply,
    id: string,
    body: EntityModification,
  ) {
    const signed = staffSessionOf(request);
    requireRole(signed, "act");
    const principal = await principalFor(signed, id, "act");
    const origin = staffOrigin(signed, String(request.id));
    const [failed] = await deps.whitelists.modifyEntities(principal, id, body, origin);
    if (!failed) return reply.code(204).send(null);
    return reply.code(400).send(errorBody(request, failed.error_code, failed.error_message, 400));
  }

  r.get("/console/api/whitelists", {
    config,
    // The answer's type is shared with the console (type-only); the cloud builds it, nothing to check.
    schema: { hide: true, response: { 200: z.custom<ConsoleWhitelistList>(), ...errors } },
    handler: (request, reply) => {
      const { staff } = staffSessionOf(request);
      reply.header("cache-control", "no-store");
      return deps.views.list(staff);
    },
  });

  r.get("/console/api/whitelists/:id", {
    config,
    schema: { hide: true, params: IdParams, response: { 200: z.custom<ConsoleWhitelist>(), ...errors } },
    handler: async (request, reply) => {
      const id = request.params.id;
      const principal = await principalFor(staffSessionOf(request), id, "read");
      reply.header("cache-control", "no-store");
      return deps.views.get(principal, id);
    },
  });

  r.post("/console/api/whitelists/:id/cards", {
    config,
    schema: {
      hide: true,
      params: IdParams,
      body: CardBody,
      response: { 204: z.null(), ...errors, ...BODY_ERRORS },
    },
    handler: (request, reply) =>
      changeCard(request, reply, request.params.id, {
        operation: "ADD",
        entities: [{ ...request.body, id_type: "rfid" }],
      }),
  });

  r.delete("/console/api/whitelists/:id/cards/:card_id", {
    config,
    schema: { hide: true, params: CardParams, response: { 204: z.null(), ...errors, ...BODY_ERRORS } },
    handler: (request, reply) =>
      changeCard(request, reply, request.params.id, {
        operation: "REMOVE",
        entities: [{ id: request.params.card_id, id_type: "rfid" }],
      }),
  });
}
