import type {
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
  HookHandlerDoneFunction,
  RouteOptions,
} from "fastify";
import { z } from "zod";
import { ErrorBody } from "../../shared/api/common.ts";
import { AppError } from "../../shared/api/errors.ts";
import type { Clock } from "../../shared/time/clock.ts";
import {
  createIdempotencyStore,
  IDEMPOTENCY_POLICY,
  type IdempotencyPolicy,
  type KeyScope,
} from "../idempotency/idempotency-store.ts";
import { requestFingerprint } from "../idempotency/request-fingerprint.ts";
import type { Db } from "../store/db.ts";
import { principalOf } from "./authenticate.ts";
import { addRouteHook } from "./route-hooks.ts";

declare module "fastify" {
  interface FastifyContextConfig {
    /** A creating POST: an `Idempotency-Key` makes its retries answer with the first result. */
    idempotent?: boolean;
  }
  interface FastifyRequest {
    idempotency: PendingKey | null;
  }
}

type PendingKey = { requestHash: string; scope?: KeyScope; holder?: string };

const HEADER = "idempotency-key";
export const REPLAYED_HEADER = "idempotent-replayed";
/** Response headers that belong to the result and come back with a replay. */
const KEPT_HEADERS = ["content-type", "location"] as const;
/** Expired keys already behave as new; deleting them is housekeeping, so once in a while is enough. */
const PURGE_EVERY_MS = 10 * 60_000;

export const IdempotencyKeyHeader = z
  .string()
  .regex(/^[\x20-\x7E]{1,255}$/, "must be 1–255 printable ASCII characters")
  .optional()
  .describe(
    "Makes a retry safe (e.g. after a reset connection). For 24 h the same key with the same request " +
      "(method, path, body) answers with the first response again, marked `Idempotent-Replayed: true`, " +
      "instead of acting twice; with a different request it is 422 ERRORS.IDEMPOTENCY_KEY_REUSED; while " +
      "the first request is still running it is 409 ERRORS.IDEMPOTENCY_KEY_IN_USE with Retry-After. " +
      "Keys belong to the API client and the route. Only a 2xx answer is kept: after any other answer " +
      "(a refusal changed nothing) the key is free, and a retry with it, corrected or not, runs again. A " +
      "caller holds at most 100,000 live keys (a rider 1,000); past that the request is not run and answers " +
      "429 ERRORS.IDEMPOTENCY_KEY_LIMIT_REACHED with Retry-After. 1–255 printable ASCII characters.",
  );

const errorResponse = (description: string) => ({
  description,
  content: { "application/json": { schema: ErrorBody } },
});

/**
 * Only a success changed something worth answering again. A refusal (4xx) changed nothing, so keeping it
 * would only answer a corrected retry with the old refusal; a 5xx's outcome is unknown, and a retry should
 * run again.
 */
export function isKeptOutcome(status: number): boolean {
  return status >= 200 && status < 300;
}

/** Adds the header and the 409/422/429 answers to an opted-in route's schema, hence to the OpenAPI document. */
function declareOnRoute(route: RouteOptions) {
  const where = `${String(route.method)} ${route.url}`;
  if (route.config?.public) throw new Error(`${where}: an idempotent route needs a caller to scope its keys`);
  const schema = route.schema ?? {};
  const headers = schema.headers;
  if (headers !== undefined && !(headers instanceof z.ZodObject)) {
    throw new Error(`${where}: an idempotent route's headers schema must be a zod object`);
  }
  route.schema = {
    ...schema,
    headers: (headers ?? z.object({})).extend({ [HEADER]: IdempotencyKeyHeader }),
    response: {
      ...(schema.response as object | undefined),
      409: errorResponse("ERRORS.IDEMPOTENCY_KEY_IN_USE: a request with this Idempotency-Key is running"),
      422: errorResponse("ERRORS.IDEMPOTENCY_KEY_REUSED: this Idempotency-Key came with another request"),
      429: errorResponse(
        "Too many requests, with Retry-After; ERRORS.IDEMPOTENCY_KEY_LIMIT_REACHED when the caller holds " +
          "its most live Idempotency-Keys (sent without a key, the request is not limited by them)",
      ),
    },
  };
}

/**
 * Idempotency-Key for routes that set `config: { idempotent: true }` (docs/decisions/idempotency.md). The key
 * is reserved in the store before the handler runs, so replicas sharing the store agree; the response is
 * kept when it is sent.
 */
export function installIdempotency(
  app: FastifyInstance,
  deps: { db: Db; clock: Clock; policy?: IdempotencyPolicy },
) {
  const policy = deps.policy ?? IDEMPOTENCY_POLICY;
  const store = createIdempotencyStore(deps.db, policy);
  let nextPurgeAt = 0;

  async function purgeIfDue(request: FastifyRequest, now: Date) {
    if (now.getTime() < nextPurgeAt) return;
    nextPurgeAt = now.getTime() + PURGE_EVERY_MS;
    await store
      .purgeExpired(now)
      .catch((err: unknown) => request.log.warn({ err }, "idempotency purge failed"));
  }

  app.decorateRequest("idempotency", null);
  // The hooks are the opted-in routes' own: every other route runs none of them.
  app.addHook("onRoute", (route) => {
    if (!route.config?.idempotent) return;
    declareOnRoute(route);
    addRouteHook(route, "preValidation", fingerprint);
    addRouteHook(route, "preHandler", reserve);
    addRouteHook(route, "onSend", settleOnSend);
  });

  // Before validation, so the fingerprint is of the body as sent, not as the schema reshaped it.
  function fingerprint(request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction) {
    if (request.headers[HEADER] !== undefined) {
      request.idempotency = {
        requestHash: requestFingerprint({
          method: request.method,
          route: request.routeOptions.url ?? "",
          params: request.params,
          query: request.query,
          body: request.body,
        }),
      };
    }
    done();
  }

  // After validation: the key's syntax has been checked by the header schema (400 otherwise).
  async function reserve(request: FastifyRequest, reply: FastifyReply) {
    const pending = request.idempotency;
    const key = request.headers[HEADER];
    if (!pending || typeof key !== "string") return;
    const principal = principalOf(request);
    const scope: KeyScope = {
      operatorId: principal.operatorId,
      clientId: principal.id,
      method: request.method,
      route: request.routeOptions.url ?? "",
      key,
    };
    const now = deps.clock.now();
    await purgeIfDue(request, now);
    const outcome = await store.reserve(scope, pending.requestHash, now, policy.maxLiveKeys[principal.kind]);
    switch (outcome.kind) {
      case "reserved":
        pending.scope = scope;
        pending.holder = outcome.holder;
        return;
      case "replay":
        return reply
          .code(outcome.response.status)
          .headers(outcome.response.headers)
          .header(REPLAYED_HEADER, "true")
          .send(outcome.response.body);
      case "reused":
        throw new AppError(
          "ERRORS.IDEMPOTENCY_KEY_REUSED",
          "This Idempotency-Key was already used with a different request; use a new key for a new request",
        );
      case "in_use":
        throw new AppError(
          "ERRORS.IDEMPOTENCY_KEY_IN_USE",
          "A request with this Idempotency-Key is still being processed; retry shortly",
          {},
          { "retry-after": "1" },
        );
      case "limit": {
        const max = policy.maxLiveKeys[principal.kind];
        throw new AppError(
          "ERRORS.IDEMPOTENCY_KEY_LIMIT_REACHED",
          `This caller already holds ${max} Idempotency-Keys from the last 24 h, the most it may; the request ` +
            "was not run. Retry after Retry-After seconds, when the oldest expires, or send it without a key",
          { limit: max },
          { "retry-after": String(Math.max(1, Math.ceil(outcome.retryAfterMs / 1000))) },
        );
      }
    }
  }

  // Runs for every answer of a reserved request, the error handler's included.
  async function settleOnSend(request: FastifyRequest, reply: FastifyReply, payload: unknown) {
    const pending = request.idempotency;
    if (!pending?.scope || !pending.holder) return payload;
    request.idempotency = null;
    await settle(request, reply, pending.scope, pending.holder, payload);
    return payload;
  }

  async function settle(
    request: FastifyRequest,
    reply: FastifyReply,
    scope: KeyScope,
    holder: string,
    payload: unknown,
  ) {
    const body = typeof payload === "string" ? payload : Buffer.isBuffer(payload) ? payload.toString() : null;
    try {
      if (body === null || !isKeptOutcome(reply.statusCode)) {
        await store.release(scope, holder);
        return;
      }
      const headers: Record<string, string> = {};
      for (const name of KEPT_HEADERS) {
        const value = reply.getHeader(name);
        if (value !== undefined) headers[name] = String(value);
      }
      const kept = await store.complete(scope, holder, { status: reply.statusCode, headers, body });
      if (!kept) request.log.warn({ key: scope.key }, "idempotency key was taken over before the response");
    } catch (err) {
      // The client still gets its answer; the reservation lapses with its lease.
      request.log.error({ err, key: scope.key }, "idempotency key not settled");
    }
  }
}
