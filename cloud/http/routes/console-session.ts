import type { FastifyInstance } from "fastify";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import { z } from "zod";
import { ErrorBody } from "../../../shared/api/common.ts";
import { STAFF_ROLES } from "../../../shared/domain/staff-roles.ts";
import type { ConsoleSessions, SignedIn } from "../../staff/console-sessions.ts";
import { CONSOLE_PATH, SESSION_COOKIE, staffSessionOf } from "../console-guard.ts";
import { ANY_ROUTE_ERRORS, BODY_ERRORS } from "../error-responses.ts";

const SignInBody = z.strictObject({
  email: z.string().min(1).max(254),
  password: z.string().min(1).max(1024),
});

const WhoAmI = z.object({
  email: z.string(),
  role: z.enum(STAFF_ROLES),
  /** null: a superadmin, who sees every operator */
  operator_id: z.string().nullable(),
  csrf_token: z.string(),
  idle_timeout_s: z.number().int(),
  /** Whether the demo hardware panel is served (the demo only). */
  demo_panel: z.boolean(),
  /** The overview map's tile URL template (CONSOLE_MAP_TILES), or null: no map. */
  map_tiles: z.string().nullable(),
});

const errors = { ...ANY_ROUTE_ERRORS, 401: ErrorBody, 403: ErrorBody };

/** The console's sign-in, who-am-I and sign-out (docs/decisions/console.md); not part of the public API. */
export function registerConsoleSessionRoutes(
  app: FastifyInstance,
  deps: { sessions: ConsoleSessions; baseUrl?: string; demoPanel?: boolean; mapTiles?: string },
) {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const cookie = {
    httpOnly: true,
    sameSite: "strict" as const,
    path: CONSOLE_PATH,
    secure: deps.baseUrl?.startsWith("https:") ?? false,
  };
  const whoAmI = (s: SignedIn): z.infer<typeof WhoAmI> => ({
    email: s.staff.email,
    role: s.staff.role,
    operator_id: s.staff.operatorId,
    csrf_token: s.csrfToken,
    idle_timeout_s: Math.round(deps.sessions.idleTimeoutMs / 1000),
    demo_panel: deps.demoPanel ?? false,
    map_tiles: deps.mapTiles ?? null,
  });
  // Bearer tokens do not apply: the console guard reads the session cookie.
  const config = { public: true };

  r.post("/console/api/session", {
    config: { ...config, consoleSignIn: true },
    schema: {
      hide: true,
      body: SignInBody,
      response: { 200: WhoAmI, ...errors, ...BODY_ERRORS, 429: ErrorBody },
    },
    handler: async (request, reply) => {
      const { token, session } = await deps.sessions.signIn(
        request.body.email,
        request.body.password,
        request.ip,
      );
      reply.setCookie(SESSION_COOKIE, token, cookie).header("cache-control", "no-store");
      return whoAmI(session);
    },
  });

  r.get("/console/api/session", {
    config,
    schema: { hide: true, response: { 200: WhoAmI, ...errors } },
    handler: (request, reply) => {
      reply.header("cache-control", "no-store");
      return whoAmI(staffSessionOf(request));
    },
  });

  r.delete("/console/api/session", {
    config,
    schema: { hide: true, response: { 204: z.null(), ...errors } },
    handler: async (request, reply) => {
      await deps.sessions.signOut(staffSessionOf(request));
      return reply.clearCookie(SESSION_COOKIE, cookie).code(204).send(null);
    },
  });
}
