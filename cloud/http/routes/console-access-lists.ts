import type { FastifyInstance } from "fastify";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import { z } from "zod";
import { AddAccessListMember, RemoveAccessListMember } from "../../../shared/api/access-list.ts";
import { ErrorBody } from "../../../shared/api/common.ts";
import type { ConsoleAccessList, ConsoleAccessListList } from "../../../shared/api/console-access-lists.ts";
import { AppError } from "../../../shared/api/errors.ts";
import type { AccessListService } from "../../access-lists/access-list-service.ts";
import type { AuditOrigin } from "../../audit/audit-log.ts";
import type { ClientPrincipal } from "../../auth/principal.ts";
import type { ConsoleAccessLists } from "../../console/console-access-lists.ts";
import { requireRole } from "../../console/staff-principal.ts";
import type { SignedIn } from "../../staff/console-sessions.ts";
import { staffOrigin, staffPrincipal } from "../../staff/staff-principal.ts";

import { staffSessionOf } from "../console-guard.ts";
import { ANY_ROUTE_ERRORS, BODY_ERRORS } from "../error-responses.ts";
import { PathId } from "../path-id.ts";

const errors = { ...ANY_ROUTE_ERRORS, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody };
const changed = { 204: z.null(), ...errors, ...BODY_ERRORS };
const IdParams = z.strictObject({ id: PathId });
// Bearer tokens do not apply: the console guard reads the session cookie.
const config = { public: true };

/**
 * The console's access lists (docs/decisions/console.md): reads for every role; adding (or inviting) and
 * removing a member (or cancelling an invite) for those who act, with the public API's bodies, through
 * the access-list service as a client of the list's operator; the audit log names the staff member.
 */
export function registerConsoleAccessListRoutes(
  app: FastifyInstance,
  deps: { views: ConsoleAccessLists; lists: AccessListService },
) {
  const r = app.withTypeProvider<ZodTypeProvider>();

  /** The principal for the list `id`: its owner's for a superadmin; another operator's is a 404. */
  async function principalFor(signed: SignedIn, id: string, action: "read" | "act") {
    if (action === "act") requireRole(signed, "act");
    const operatorId = await deps.views.operatorFor(signed.staff.operatorId, id);
    if (operatorId === undefined) throw new AppError("ERRORS.NOT_FOUND", `Access list ${id} not found`);
    return staffPrincipal(signed, operatorId, action);
  }

  r.get("/console/api/access-lists", {
    config,
    // The answer's type is shared with the console (type-only); the cloud builds it, nothing to check.
    schema: { hide: true, response: { 200: z.custom<ConsoleAccessListList>(), ...errors } },
    handler: (request, reply) => {
      reply.header("cache-control", "no-store");
      return deps.views.list(staffSessionOf(request).staff);
    },
  });

  r.get("/console/api/access-lists/:id", {
    config,
    schema: { hide: true, params: IdParams, response: { 200: z.custom<ConsoleAccessList>(), ...errors } },
    handler: async (request, reply) => {
      const principal = await principalFor(staffSessionOf(request), request.params.id, "read");
      reply.header("cache-control", "no-store");
      return deps.views.get(principal, request.params.id);
    },
  });

  /**
   * A change to the list `:id` (the route's `path` under it) as the staff member: `act` gets the principal,
   * the public API's body and the origin the audit entry names; 204 when done.
   */
  function change<B extends z.ZodType>(
    path: string,
    body: B,
    act: (principal: ClientPrincipal, id: string, body: z.infer<B>, origin: AuditOrigin) => Promise<unknown>,
  ) {
    r.post(`/console/api/access-lists/:id/${path}`, {
      config,
      schema: { hide: true, params: IdParams, body, response: changed },
      handler: async (request, reply) => {
        const signed = staffSessionOf(request);
        const principal = await principalFor(signed, request.params.id, "act");
        const origin = staffOrigin(signed, String(request.id));
        await act(principal, request.params.id, request.body as z.infer<B>, origin);
        return reply.code(204).send(null);
      },
    });
  }

  change("members", AddAccessListMember, (p, id, body, origin) => deps.lists.add(p, id, body, origin));
  change("remove", RemoveAccessListMember, (p, id, body, origin) => deps.lists.remove(p, id, body, origin));
}
