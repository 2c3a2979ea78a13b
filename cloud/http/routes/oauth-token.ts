import { randomBytes } from "node:crypto";
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import { z } from "zod";
import { ErrorBody } from "../../../shared/api/common.ts";
import type { ErrorCode } from "../../../shared/api/errors.ts";
import { TokenError, TokenRequest, TokenResponse } from "../../../shared/api/oauth.ts";
import type { Clock } from "../../../shared/time/clock.ts";
import { createFailureLimiter, type FailurePolicy } from "../../auth/failure-limiter.ts";
import { verifySecret } from "../../auth/secrets.ts";
import { ACCESS_TOKEN_TTL_S, type TokenIssuer } from "../../auth/tokens.ts";
import type { Db } from "../../store/db.ts";
import { apiClientRepository } from "../api-client-repository.ts";
import { ANY_ROUTE_ERRORS } from "../error-responses.ts";

type OAuthError = "invalid_request" | "invalid_client" | "unsupported_grant_type";

const SPEC_CODE: Record<OAuthError, ErrorCode> = {
  invalid_request: "ERRORS.INVALID_REQUEST",
  invalid_client: "ERRORS.INVALID_CLIENT",
  unsupported_grant_type: "ERRORS.UNSUPPORTED_GRANT_TYPE",
};

/** RFC 6749 §5.2 error, carrying the spec's error fields as well so every error body looks alike. */
function oauthError(
  request: FastifyRequest,
  reply: FastifyReply,
  status: number,
  error: OAuthError,
  description: string,
) {
  reply.code(status).header("cache-control", "no-store").header("pragma", "no-cache");
  if (error === "invalid_client") reply.header("www-authenticate", 'Basic realm="oauth2", charset="UTF-8"');
  return reply.send({
    error,
    error_description: description,
    error_message: description,
    status_code: status,
    correlation_id: String(request.id),
    error_code: SPEC_CODE[error],
  });
}

/** RFC 6749 §2.3.1: client id and secret are form-urlencoded before base64. */
function parseBasic(header: string): { id: string; secret: string } | null {
  const m = /^Basic ([A-Za-z0-9+/]+=*)$/i.exec(header);
  if (!m?.[1]) return null;
  const decoded = Buffer.from(m[1], "base64").toString("utf8");
  const colon = decoded.indexOf(":");
  if (colon < 0) return null;
  try {
    const unform = (s: string) => decodeURIComponent(s.replace(/\+/g, " "));
    return { id: unform(decoded.slice(0, colon)), secret: unform(decoded.slice(colon + 1)) };
  } catch {
    return null;
  }
}

const FORM = "application/x-www-form-urlencoded";
/** A well-formed hash that no secret matches (random salt and key). */
const UNKNOWN_CLIENT_HASH = `scrypt$${randomBytes(16).toString("base64")}$${randomBytes(32).toString("base64")}`;

/** S8: 20 failures a minute from one address block that address until the oldest leaves the minute. */
const PER_ADDRESS: FailurePolicy = { max: 20, windowMs: 60_000 };
/**
 * 100 failures a minute for one client id (at least five addresses' worth) block it for 1 s, and each
 * further failure doubles the block up to 15 min, until the client id has gone an hour without one.
 */
const PER_CLIENT: FailurePolicy = {
  max: 100,
  windowMs: 60_000,
  backoff: { baseMs: 1_000, maxMs: 15 * 60_000, forgetMs: 60 * 60_000 },
};

/** POST {auth_url}/oauth2/token, client credentials grant (spec: S2S OAuth 2.0). */
export function registerTokenRoute(
  app: FastifyInstance,
  deps: { db: Db; tokens: TokenIssuer; clock: Clock },
) {
  const clients = apiClientRepository(deps.db);
  // Failures are counted per address, so one address cannot lock a client out of every other; per
  // client only far above what one address may reach, and then backing off (docs/decisions/authentication.md).
  const byAddress = createFailureLimiter({ clock: deps.clock, policy: PER_ADDRESS });
  const byClient = createFailureLimiter({ clock: deps.clock, policy: PER_CLIENT });

  // Own scope: the body is read raw so that a JSON or other body is an OAuth invalid_request, not a 415.
  void app.register((scope, _opts, done) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser("*", { parseAs: "string", bodyLimit: 8 * 1024 }, (_req, body, done) =>
      done(null, body),
    );
    // A Content-Type header too malformed for any parser ("", "a, b") is still the wrong content type.
    scope.setErrorHandler((err: FastifyError, request, reply) => {
      if (err.code === "FST_ERR_CTP_INVALID_MEDIA_TYPE")
        return oauthError(request, reply, 400, "invalid_request", `content type must be ${FORM}`);
      throw err;
    });
    scope.withTypeProvider<ZodTypeProvider>().post("/oauth2/token", {
      config: { public: true, ownInput: true },
      // The form is documented by `body` but read by the handler, which answers in RFC 6749's terms; the
      // route has no other schema to validate.
      validatorCompiler: () => () => true,
      schema: {
        tags: ["auth"],
        summary: "Issue an access token (OAuth 2.0 client credentials)",
        security: [],
        consumes: [FORM],
        body: TokenRequest,
        response: {
          ...ANY_ROUTE_ERRORS,
          200: TokenResponse,
          // A URL the router cannot decode is answered before the route runs, in the standard body.
          400: z.union([TokenError, ErrorBody]),
          401: TokenError,
          413: ErrorBody,
          429: TokenError,
        },
      },
      handler: async (request, reply) => {
        const contentType = (request.headers["content-type"] ?? "").split(";")[0]?.trim().toLowerCase();
        if (contentType !== FORM)
          return oauthError(request, reply, 400, "invalid_request", `content type must be ${FORM}`);
        const query = new URLSearchParams(request.url.split("?")[1] ?? "");
        if (query.has("client_secret") || query.has("client_id") || query.has("grant_type")) {
          return oauthError(
            request,
            reply,
            400,
            "invalid_request",
            "parameters must be sent in the body, not the query",
          );
        }
        const raw: unknown = request.body;
        const form = new URLSearchParams(typeof raw === "string" ? raw : "");
        for (const key of new Set(form.keys())) {
          if (form.getAll(key).length > 1)
            return oauthError(request, reply, 400, "invalid_request", `${key} is repeated`);
        }
        const grant = form.get("grant_type");
        if (!grant) return oauthError(request, reply, 400, "invalid_request", "grant_type is required");
        if (grant !== "client_credentials") {
          return oauthError(
            request,
            reply,
            400,
            "unsupported_grant_type",
            "only client_credentials is supported",
          );
        }
        const header = request.headers.authorization;
        const inBody = form.has("client_id") || form.has("client_secret");
        if (header && inBody) {
          return oauthError(
            request,
            reply,
            400,
            "invalid_request",
            "send client credentials in one place only",
          );
        }
        const creds = header
          ? parseBasic(header)
          : { id: form.get("client_id") ?? "", secret: form.get("client_secret") ?? "" };
        if (!creds?.id || !creds.secret) {
          return oauthError(request, reply, 401, "invalid_client", "client credentials are required");
        }
        const wait = Math.max(byAddress.retryAfterS(request.ip), byClient.retryAfterS(creds.id));
        if (wait > 0) {
          reply.header("retry-after", String(wait));
          return reply
            .code(429)
            .header("cache-control", "no-store")
            .send({
              error: "invalid_request",
              error_description: "too many failed attempts",
              error_message: "Too many failed authentication attempts; try again later",
              status_code: 429,
              correlation_id: String(request.id),
              error_code: "ERRORS.RATE_LIMITED",
            });
        }
        // No client id holds U+0000, and PostgreSQL refuses it in a query (a 500): such an id is unknown.
        const client = creds.id.includes("\u0000") ? undefined : await clients.find(creds.id);
        // An unknown client costs the same scrypt as a wrong secret, so timing does not reveal client ids.
        if (!(await verifySecret(creds.secret, client?.secretHash ?? UNKNOWN_CLIENT_HASH)) || !client) {
          byAddress.fail(request.ip);
          byClient.fail(creds.id);
          return oauthError(request, reply, 401, "invalid_client", "client authentication failed");
        }
        const access_token = await deps.tokens.issue({
          id: client.clientId,
          operatorId: client.operatorId,
          permissions: client.permissions,
        });
        reply.header("cache-control", "no-store").header("pragma", "no-cache");
        return { access_token, token_type: "Bearer" as const, expires_in: ACCESS_TOKEN_TTL_S as 3600 };
      },
    });
    done();
  });
}
