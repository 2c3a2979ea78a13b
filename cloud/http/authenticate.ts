import type { FastifyInstance, FastifyRequest } from "fastify";
import { AppError } from "../../shared/api/errors.ts";
import type { TokenPrincipal, UserPrincipal } from "../auth/principal.ts";
import type { TokenIssuer } from "../auth/tokens.ts";

declare module "fastify" {
  interface FastifyRequest {
    principal: TokenPrincipal | null;
  }
  interface FastifyContextConfig {
    /** Routes open without a bearer token: the public map, the token endpoint, docs, health. */
    public?: boolean;
  }
}

/** Whether a rider's token was revoked after it was issued (cloud/users/rider-token-revocation.ts). */
export type RiderTokenRevoked = (principal: UserPrincipal) => Promise<boolean>;

/**
 * Every route but the public ones needs a valid, unexpired bearer token (spec: Authentication); a rider's
 * token must also not have been revoked since it was issued.
 */
export function installAuthentication(
  app: FastifyInstance,
  tokens: TokenIssuer,
  riderTokenRevoked: RiderTokenRevoked = async () => false,
) {
  app.decorateRequest("principal", null);
  app.addHook("onRequest", async (request) => {
    if (request.routeOptions.config.public || !request.routeOptions.url) return;
    const header = request.headers.authorization;
    if (!header) {
      // RFC 6750 §3.1: no error parameter when the request carried no credentials at all (S9).
      throw new AppError(
        "ERRORS.UNAUTHORIZED",
        "Missing bearer token",
        {},
        { "www-authenticate": 'Bearer realm="api"' },
      );
    }
    const match = /^Bearer ([A-Za-z0-9\-._~+/]+=*)$/i.exec(header);
    let verdict = match?.[1]
      ? await tokens.verify(match[1])
      : { ok: false as const, reason: "not a bearer token" };
    if (verdict.ok && verdict.principal.kind === "user" && (await riderTokenRevoked(verdict.principal)))
      verdict = { ok: false, reason: "token revoked" };
    if (!verdict.ok) {
      throw new AppError(
        "ERRORS.INVALID_TOKEN",
        `Invalid bearer token: ${verdict.reason}`,
        {},
        {
          "www-authenticate": `Bearer realm="api", error="invalid_token", error_description="${verdict.reason}"`,
        },
      );
    }
    request.principal = verdict.principal;
  });
}

/** The caller, for handlers of authenticated routes. */
export function principalOf(request: FastifyRequest): TokenPrincipal {
  if (!request.principal) throw new AppError("ERRORS.UNAUTHORIZED", "Missing bearer token");
  return request.principal;
}
