import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { hasZodFastifySchemaValidationErrors } from "fastify-type-provider-zod";
import { AppError, ERROR_CODES, ERROR_STATUS, type ErrorCode, isAppError } from "../../shared/api/errors.ts";
import { isStoreFull } from "../store/store-full.ts";
import { errorBody, sendAppError } from "./error-body.ts";

const METHODS = ["GET", "POST", "PATCH", "PUT", "DELETE"] as const;

/** Fastify's own errors (body parsing, limits) mapped to our codes by status. */
const FRAMEWORK_CODES: Record<number, ErrorCode> = {
  400: "ERRORS.VALIDATION_FAILED",
  404: "ERRORS.NOT_FOUND",
  405: "ERRORS.METHOD_NOT_ALLOWED",
  406: "ERRORS.NOT_ACCEPTABLE",
  413: "ERRORS.PAYLOAD_TOO_LARGE",
  415: "ERRORS.UNSUPPORTED_MEDIA_TYPE",
  429: "ERRORS.RATE_LIMITED",
};

type Issue = { path: PropertyKey[]; message: string; code?: string; keys?: string[] };

/** "body.latitude: expected number" — the message names the field (issue: validation failures). */
function describeIssues(context: string, issues: Issue[]): { message: string; fields: string[] } {
  const parts: string[] = [];
  const fields: string[] = [];
  for (const i of issues) {
    const base = [context, ...i.path.map(String)].join(".");
    if (i.code === "unrecognized_keys" && i.keys) {
      for (const k of i.keys) {
        fields.push(`${base}.${k}`);
        parts.push(`${base}.${k}: unknown or read-only field`);
      }
    } else {
      fields.push(base);
      parts.push(`${base}: ${i.message}`);
    }
  }
  // One value can fail several checks with the same message (a URL's protocol and host): say it once.
  return { message: [...new Set(parts)].join("; "), fields: [...new Set(fields)] };
}

/** Router errors, raised before any route or hook runs. */
const ROUTER_ERRORS: Record<string, { code: ErrorCode; message: string }> = {
  FST_ERR_BAD_URL: { code: "ERRORS.BAD_REQUEST", message: "The URL holds a malformed percent-encoding" },
  FST_ERR_MAX_PARAM_LENGTH: {
    code: "ERRORS.URI_TOO_LONG",
    message: "A path parameter is longer than 100 characters",
  },
};

/**
 * Fastify's `frameworkErrors`: a URL the router cannot decode, or a path parameter over its length
 * limit. No onRequest hook has run, so the correlation id header is set here.
 */
export function answerFrameworkError(err: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  reply.header("x-correlation-id", request.id);
  const known = ROUTER_ERRORS[err.code];
  if (known) return sendAppError(request, reply, new AppError(known.code, known.message));
  request.log.error({ err }, "unhandled router error");
  return reply.code(500).send(errorBody(request, "ERRORS.INTERNAL", "Internal server error", 500));
}

export const STORE_FULL_MESSAGE =
  "The service cannot store anything just now (its disk is full); try again later";

export function installErrorHandling(app: FastifyInstance) {
  // Request bodies are JSON only (spec: Endpoints). Fastify ships a text/plain parser by default, which
  // handed the raw string to the validator and turned an unsupported media type into a 400 (U3: 415).
  app.removeContentTypeParser("text/plain");
  app.setErrorHandler((err: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    if (isAppError(err)) return sendAppError(request, reply, err);
    if (hasZodFastifySchemaValidationErrors(err)) {
      const context = err.validationContext ?? "request";
      // fastify-type-provider-zod 7 flattens each zod issue: path → instancePath "/a/b", code → keyword.
      const issues = err.validation.map((v) => ({
        path: v.instancePath.split("/").filter((p) => p !== ""),
        message: v.message ?? "invalid",
        code: v.keyword,
        keys: Array.isArray(v.params.keys) ? v.params.keys.map(String) : undefined,
      }));
      const { message, fields } = describeIssues(context, issues);
      return sendAppError(request, reply, new AppError("ERRORS.VALIDATION_FAILED", message, { fields }));
    }
    // Fastify reads a body before the not-found handler runs: an unknown route or method is still
    // answered as such when that body is too large or not JSON (docs/decisions/http.md: unknown routes 404, 405).
    if (request.is404) return answerUnrouted(app, request, reply);
    const status = err.statusCode ?? 500;
    if (status >= 400 && status < 500) {
      // A status of a plugin's own (@fastify/static's 403 for a path out of its root) keeps its status.
      const code = FRAMEWORK_CODES[status] ?? ERROR_CODES.find((c) => ERROR_STATUS[c] === status);
      const message = err.code === "FST_ERR_CTP_INVALID_JSON_BODY" ? "body: not valid JSON" : err.message;
      if (code) return reply.code(status).send(errorBody(request, code, message, status));
      return reply.code(400).send(errorBody(request, "ERRORS.BAD_REQUEST", message, 400));
    }
    // A full disk under the store (SQLite's SQLITE_FULL, PostgreSQL's disk_full) passes once there is room:
    // the write was rolled back, and the client may try again rather than take it as a bug.
    if (isStoreFull(err)) {
      request.log.error({ err }, "the store is full: request refused");
      const full = new AppError(
        "ERRORS.SERVICE_UNAVAILABLE",
        STORE_FULL_MESSAGE,
        {},
        { "retry-after": "30" },
      );
      return sendAppError(request, reply, full);
    }
    // Nothing internal leaks: the client gets the correlation id, the log gets the rest (S32).
    request.log.error({ err }, "unhandled error");
    return reply.code(500).send(errorBody(request, "ERRORS.INTERNAL", "Internal server error", 500));
  });

  app.setNotFoundHandler((request, reply) => answerUnrouted(app, request, reply));
}

/** No route: 405 with `Allow` when another method has one on this path, else 404. */
function answerUnrouted(app: FastifyInstance, request: FastifyRequest, reply: FastifyReply) {
  const path = request.url.split("?")[0] ?? "/";
  // Under /console/api/ the console pages' `GET /console/*` matches too, but answers 404 there: no method
  // is allowed on an unknown console API path.
  const pageOnly = (params: Record<string, string | undefined>) =>
    path.startsWith("/console/api/") && params["*"] !== undefined;
  const allowed = METHODS.filter((m) => {
    const found = m !== request.method && app.findRoute({ method: m, url: path });
    return found && !pageOnly(found.params as Record<string, string | undefined>);
  });
  if (allowed.length > 0) {
    return reply
      .code(405)
      .header("allow", allowed.join(", "))
      .send(
        errorBody(
          request,
          "ERRORS.METHOD_NOT_ALLOWED",
          `Method ${request.method} is not allowed on ${path}`,
          405,
        ),
      );
  }
  return reply
    .code(404)
    .send(errorBody(request, "ERRORS.NOT_FOUND", `Route ${request.method} ${path} not found`, 404));
}
