import { timingSafeEqual } from "node:crypto";
import fastifyCookie from "@fastify/cookie";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { AppError } from "../../shared/api/errors.ts";
import type { ConsoleSessions, SignedIn } from "../staff/console-sessions.ts";
import { addRouteHook } from "./route-hooks.ts";

declare module "fastify" {
  interface FastifyRequest {
    /** The console session the request's cookie names, under /console/api; null otherwise. */
    staffSession: SignedIn | null;
  }
  interface FastifyContextConfig {
    /** The console's sign-in: state-changing, but without a session yet (its Origin is still checked). */
    consoleSignIn?: boolean;
  }
}

export const SESSION_COOKIE = "console_session";
export const CONSOLE_PATH = "/console";
const CONSOLE_API = "/console/api/";
export const CSRF_HEADER = "x-csrf-token";
const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

const sameToken = (given: string, expected: string) => {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
};

/**
 * Cookie sessions for /console/api (docs/decisions/console.md): the session is read from its cookie, and a
 * state-changing request is refused (403, before anything runs) when its Origin is another site's or it
 * lacks the session's CSRF token in X-CSRF-Token. The cookie is SameSite=Strict too; the token and the
 * Origin check hold where SameSite does not (older browsers, a sibling subdomain).
 */
export async function installConsoleGuard(
  app: FastifyInstance,
  deps: { sessions: ConsoleSessions; baseUrl?: string },
) {
  await app.register(fastifyCookie);
  app.decorateRequest("staffSession", null);
  const ownOrigin = deps.baseUrl ? new URL(deps.baseUrl).origin : null;
  // Without a configured base URL, the origin the request itself was addressed to.
  const expectedOrigin = (request: FastifyRequest) => ownOrigin ?? `${request.protocol}://${request.host}`;

  // On the console API's routes only (the hook was application-wide, and returned at once elsewhere).
  app.addHook("onRoute", (route) => {
    if (route.url.startsWith(CONSOLE_API)) addRouteHook(route, "onRequest", guard);
  });
  async function guard(request: FastifyRequest) {
    const token = request.cookies[SESSION_COOKIE];
    const session = token ? await deps.sessions.resolve(token) : null;
    if (SAFE_METHODS.has(request.method)) {
      request.staffSession = session;
      if (session) await deps.sessions.touch(session);
      return;
    }
    const origin = request.headers.origin;
    if (origin !== undefined && origin !== expectedOrigin(request))
      throw new AppError("ERRORS.FORBIDDEN", "Cross-origin console request refused");
    if (request.routeOptions.config.consoleSignIn) return;
    if (!session) throw new AppError("ERRORS.UNAUTHORIZED", "Not signed in to the console");
    const csrf = request.headers[CSRF_HEADER];
    if (typeof csrf !== "string" || !sameToken(csrf, session.csrfToken))
      throw new AppError("ERRORS.FORBIDDEN", `Missing or wrong ${CSRF_HEADER} header`);
    request.staffSession = session;
    await deps.sessions.touch(session);
  }
}

/** The signed-in staff member, for handlers of console routes. */
export function staffSessionOf(request: FastifyRequest): SignedIn {
  if (!request.staffSession) throw new AppError("ERRORS.UNAUTHORIZED", "Not signed in to the console");
  return request.staffSession;
}
