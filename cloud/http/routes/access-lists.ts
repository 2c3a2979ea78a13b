import type { FastifyInstance } from "fastify";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import { z } from "zod";
import {
  AccessListMemberList,
  AddAccessListMember,
  RemoveAccessListMember,
} from "../../../shared/api/access-list.ts";
import { ErrorBody } from "../../../shared/api/common.ts";
import { Uuid } from "../../../shared/api/uuid.ts";
import type { AccessListService } from "../../access-lists/access-list-service.ts";
import { requestOrigin } from "../../audit/audit-log.ts";
import { principalOf } from "../authenticate.ts";
import { ANY_ROUTE_ERRORS, BODY_ERRORS, PATH_PARAM_ERRORS } from "../error-responses.ts";

/** 403: a rider's token (management is an operator function); 404: no such list of the caller's operator. */
const errors = {
  ...ANY_ROUTE_ERRORS,
  ...PATH_PARAM_ERRORS,
  401: ErrorBody,
  403: ErrorBody,
  404: ErrorBody,
};

const params = z.object({ access_list_id: Uuid });
const BASE = "/access-control/v1/mgmt/access-lists/:access_list_id";

export function registerAccessListRoutes(app: FastifyInstance, lists: AccessListService) {
  const r = app.withTypeProvider<ZodTypeProvider>();

  r.get(`${BASE}/users`, {
    schema: {
      tags: ["access lists"],
      summary: "List the members of an access list, pending phone invites included",
      params,
      response: { 200: AccessListMemberList, ...errors },
    },
    handler: (request) => lists.members(principalOf(request), request.params.access_list_id),
  });

  r.post(`${BASE}/users`, {
    config: { idempotent: true },
    schema: {
      tags: ["access lists"],
      summary: "Add a member by user id, or by phone number (an invite if no user has it yet)",
      description:
        "Exactly one of user_id and phone_number. Adding a current member again updates the comment and " +
        "the payment terms and withdraws a pending removal; external_id cannot change (400 ERRORS.EXTERNAL_ID_IMMUTABLE).",
      params,
      body: AddAccessListMember,
      response: { 204: z.null().describe("Added"), ...errors, ...BODY_ERRORS },
    },
    handler: async (request, reply) => {
      const principal = principalOf(request);
      const origin = requestOrigin(principal, String(request.id));
      await lists.add(principal, request.params.access_list_id, request.body, origin);
      return reply.code(204).send(null);
    },
  });

  r.post(`${BASE}/remove-user`, {
    config: { idempotent: true },
    schema: {
      tags: ["access lists"],
      summary: "Remove a member or cancel a phone invite",
      description:
        "Paid lists remove at the end of the current payment period unless remove_now is true; closed and " +
        "password lists and invites remove at once. Neither a member nor invited: 400 ERRORS.NOT_A_MEMBER.",
      params,
      body: RemoveAccessListMember,
      response: { 204: z.null().describe("Removed"), ...errors, ...BODY_ERRORS },
    },
    handler: async (request, reply) => {
      const principal = principalOf(request);
      const origin = requestOrigin(principal, String(request.id));
      await lists.remove(principal, request.params.access_list_id, request.body, origin);
      return reply.code(204).send(null);
    },
  });
}
