import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import { z } from "zod";
import { ErrorBody } from "../../../shared/api/common.ts";
import { Uuid } from "../../../shared/api/uuid.ts";
import {
  EntityBatchFailure,
  EntityModification,
  MAX_BATCH_ITEMS,
  TargetBatchFailure,
  TargetModification,
  TargetQuery,
  Whitelist,
  WhitelistEntityList,
  WhitelistList,
  WhitelistTargetList,
} from "../../../shared/api/whitelist.ts";
import { requestOrigin } from "../../audit/audit-log.ts";
import type { ItemFailure } from "../../whitelists/run-batch.ts";
import type { WhitelistService } from "../../whitelists/whitelist-service.ts";
import { principalOf } from "../authenticate.ts";
import { errorBody } from "../error-body.ts";
import { ANY_ROUTE_ERRORS, BODY_ERRORS, PATH_PARAM_ERRORS } from "../error-responses.ts";
import { PathId } from "../path-id.ts";

/** 403: a rider's token (an operator function); 404: no such whitelist of the caller's operator. */
const errors = { ...ANY_ROUTE_ERRORS, ...PATH_PARAM_ERRORS, 401: ErrorBody, 403: ErrorBody };
const byId = { ...errors, 404: ErrorBody };
/** Entity and target reads answer 504 rather than wait on a slow store (spec: Errors). */
const slowRead = { 504: ErrorBody };

const params = z.object({ whitelist_id: Uuid });
const BASE = "/whitelist/v1/whitelists";
const TAGS = ["whitelists"];

const BATCH_RULES =
  `Items are applied one by one, each on its own: a success is kept when another item fails. 204 when every ` +
  `item was applied; otherwise 400 ERRORS.BATCH_ITEMS_FAILED whose error_results lists only the failed ` +
  `items ({index, id, error_code, error_message} and the item as sent). A body that is not an operation ` +
  `and a list of 1–${MAX_BATCH_ITEMS} objects is refused whole (400 ERRORS.VALIDATION_FAILED, nothing applied).`;

/** 204 when every item was applied; else 400 with the standard fields and the failed items. */
function answerBatch(
  request: FastifyRequest,
  reply: FastifyReply,
  failures: ItemFailure[],
  key: "entity" | "target",
) {
  if (failures.length === 0) return reply.code(204).send(null);
  const n = failures.length;
  const message = `${n} item${n === 1 ? "" : "s"} of the batch failed; the others were applied`;
  return reply.code(400).send({
    ...errorBody(request, "ERRORS.BATCH_ITEMS_FAILED", message, 400),
    error_results: failures.map(({ item, ...f }) => ({ ...f, [key]: item })),
  });
}

/** The spec's seven whitelist routes (docs/decisions/whitelists.md). */
export function registerWhitelistRoutes(app: FastifyInstance, whitelists: WhitelistService) {
  const r = app.withTypeProvider<ZodTypeProvider>();

  // Like the spec's row it has no 404: an unknown or another operator's location lists nothing.
  r.get("/whitelist/v1/locations/:location_id/whitelists", {
    schema: {
      tags: TAGS,
      summary: "List the whitelists targeting a location or any of its devices",
      params: z.object({ location_id: PathId }),
      response: { 200: WhitelistList, ...errors },
    },
    handler: (request) => whitelists.atLocation(principalOf(request), request.params.location_id),
  });

  r.get(BASE, {
    schema: {
      tags: TAGS,
      summary: "List the operator's whitelists",
      response: { 200: WhitelistList, ...ANY_ROUTE_ERRORS, 401: ErrorBody, 403: ErrorBody },
    },
    handler: (request) => whitelists.list(principalOf(request)),
  });

  r.get(`${BASE}/:whitelist_id`, {
    schema: { tags: TAGS, summary: "A whitelist", params, response: { 200: Whitelist, ...byId } },
    handler: (request) => whitelists.get(principalOf(request), request.params.whitelist_id),
  });

  r.get(`${BASE}/:whitelist_id/entities`, {
    schema: {
      tags: TAGS,
      summary: "The cards of a whitelist",
      description: "status EXPIRED is an ACTIVE card whose expires_at has passed; it is never written.",
      params,
      response: { 200: WhitelistEntityList, ...byId, ...slowRead },
    },
    handler: (request) => whitelists.entities(principalOf(request), request.params.whitelist_id),
  });

  r.post(`${BASE}/:whitelist_id/entities`, {
    schema: {
      tags: TAGS,
      summary: "Add (upsert) or remove cards",
      description:
        `${BATCH_RULES} ADD replaces a card already in the list; status EXPIRED is refused (it follows from ` +
        "expires_at). REMOVE needs only id and id_type; a card not in the list is already removed.",
      params,
      body: EntityModification,
      response: {
        204: z.null().describe("Every item was applied"),
        ...byId,
        ...BODY_ERRORS,
        400: z.union([ErrorBody, EntityBatchFailure]),
      },
    },
    handler: async (request, reply) => {
      const principal = principalOf(request);
      const origin = requestOrigin(principal, String(request.id));
      const failures = await whitelists.modifyEntities(
        principal,
        request.params.whitelist_id,
        request.body,
        origin,
      );
      return answerBatch(request, reply, failures, "entity");
    },
  });

  r.get(`${BASE}/:whitelist_id/targets`, {
    schema: {
      tags: TAGS,
      summary: "The devices and locations a whitelist applies to",
      params,
      querystring: TargetQuery,
      response: { 200: WhitelistTargetList, ...byId, ...slowRead },
    },
    handler: (request) =>
      whitelists.targets(principalOf(request), request.params.whitelist_id, request.query),
  });

  r.post(`${BASE}/:whitelist_id/targets`, {
    schema: {
      tags: TAGS,
      summary: "Add or remove the devices and locations a whitelist applies to (SUPERADMIN)",
      description:
        `${BATCH_RULES} Targets are the service operator's set-up: 403 without SUPERADMIN. A target is a ` +
        "device or location of the caller's operator (else ERRORS.UNKNOWN_TARGET); a device is the direct " +
        "target of at most 3 whitelists (ERRORS.WHITELIST_LIMIT_REACHED). keys_only defaults to true.",
      params,
      body: TargetModification,
      response: {
        204: z.null().describe("Every item was applied"),
        ...byId,
        ...BODY_ERRORS,
        400: z.union([ErrorBody, TargetBatchFailure]),
      },
    },
    handler: async (request, reply) =>
      answerBatch(
        request,
        reply,
        await whitelists.modifyTargets(principalOf(request), request.params.whitelist_id, request.body),
        "target",
      ),
  });
}
