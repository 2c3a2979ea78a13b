import type { FastifyInstance, FastifyRequest } from "fastify";
import { AppError } from "../../shared/api/errors.ts";
import type { TokenPrincipal } from "../auth/principal.ts";
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

/** Every route but the public ones needs a valid, unexpired bearer token (spec: Authentication). */
export function installAuthentication(app: FastifyInstance, tokens: TokenIssuer) {
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
    const verdict = match?.[1]
      ? await tokens.verify(match[1])
      : { ok: false as const, reason: "not a bearer token" };
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
