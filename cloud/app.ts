import { randomUUID } from "node:crypto";
import Fastify, { type FastifyBaseLogger, type FastifyInstance, LogController } from "fastify";
import { validatorCompiler } from "fastify-type-provider-zod";
import type { Logger } from "pino";
import { AppError } from "../shared/api/errors.ts";
import type { Clock } from "../shared/time/clock.ts";
import { createAccessListService } from "./access-lists/access-list-service.ts";
import { createTokenIssuer } from "./auth/tokens.ts";
import { createCommandService } from "./commands/command-service.ts";
import { createSettledNotifier } from "./commands/command-settled.ts";
import { createDeviceService } from "./devices/device-service.ts";
import type { CommandTimeoutConfig } from "./devices/timeouts.ts";
import { registerApiDocs } from "./http/api-docs.ts";
import { installAuthentication } from "./http/authenticate.ts";
import { createClientErrorHandler } from "./http/client-errors.ts";
import { type ConsoleOptions, installConsole } from "./http/console.ts";
import { answerFrameworkError, installErrorHandling } from "./http/error-handler.ts";
import { installIdempotency } from "./http/idempotency.ts";
import { installNulGuard } from "./http/reject-nul.ts";
import { installRequestLog } from "./http/request-log.ts";
import { registerAccessListRoutes } from "./http/routes/access-lists.ts";
import { registerConsoleDeviceRoutes } from "./http/routes/console-devices.ts";
import { registerDeviceRoutes } from "./http/routes/devices.ts";
import { registerExternalUserRoutes } from "./http/routes/external-users.ts";
import { registerHealthRoutes } from "./http/routes/health.ts";
import { registerLocationLinkRoutes } from "./http/routes/location-links.ts";
import { registerLocationRoutes } from "./http/routes/locations.ts";
import { registerTokenRoute } from "./http/routes/oauth-token.ts";
import { registerPhotoRoutes } from "./http/routes/photos.ts";
import { registerSessionRoutes } from "./http/routes/sessions.ts";
import { registerWhitelistRoutes } from "./http/routes/whitelists.ts";
import type { IdempotencyPolicy } from "./idempotency/idempotency-store.ts";
import { createLocationLinks } from "./locations/location-links.ts";
import { createLocationService } from "./locations/location-service.ts";
import { createPhotoService } from "./photos/photo-service.ts";
import type { CommandSettledNotifier, GatewayPublisher } from "./ports.ts";
import { createSessionService } from "./sessions/session-service.ts";
import type { Db } from "./store/db.ts";
import { riderTokenRevoked } from "./users/rider-token-revocation.ts";
import { createUserService, type ExternalUserOptions } from "./users/user-service.ts";
import { createWhitelistService, type WhitelistOptions } from "./whitelists/whitelist-service.ts";

export type AppDeps = {
  db: Db;
  clock: Clock;
  log: Logger;
  gateways: GatewayPublisher;
  tokenSecret: Uint8Array;
  issuer: string;
  timeouts: CommandTimeoutConfig;
  /** Reports whether the store and the broker link are usable, for /readyz. */
  isReady?: () => Promise<boolean>;
  /** Time to receive a whole request, headers and body, before answering 408 (default 30 s). */
  requestTimeoutMs?: number;
  /** External-user sign-up and sign-in: callback limit, body cap, rate limits (defaults: the spec's). */
  externalUsers?: ExternalUserOptions;
  /** Whitelists: the read deadline (504) and the whitelists per device (defaults: 5 s, the spec's 3). */
  whitelists?: WhitelistOptions;
  /** Idempotency-Key window, lease and live keys per caller (default IDEMPOTENCY_POLICY). */
  idempotency?: IdempotencyPolicy;
  /**
   * Shared with what ends commands in this process (gateway link, deadline sweeper) so a `Prefer: wait`
   * answers at once; without it only this app's own endings are heard at once, the rest through the store.
   */
  settled?: CommandSettledNotifier;
  /** How often a `Prefer: wait` reads its command from the store (default 250 ms). */
  commandWaitPollMs?: number;
  /**
   * The console's sessions: idle timeout and sign-in limits, and the public base URL (BASE_URL), which
   * makes the cookie Secure when https and is the Origin state-changing requests must come from.
   */
  console?: ConsoleOptions;
};

/** A caller-supplied correlation id is kept if it is short and plain (U4); otherwise we make one. */
const CORRELATION_ID = /^[A-Za-z0-9._:-]{1,128}$/;

function redactUrl(url: string): string {
  return url.replace(/([?&]access_token=)[^&]*/gi, "$1[redacted]");
}

/** Builds the HTTP application from its dependencies; main.ts and the tests both call this. */
export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const requestTimeout = deps.requestTimeoutMs ?? 30_000;
  const app = Fastify({
    loggerInstance: deps.log as FastifyBaseLogger,
    bodyLimit: 64 * 1024,
    requestIdHeader: false,
    // One access-log line per request (installRequestLog) instead of Fastify's incoming/completed pair.
    logController: new LogController({ requestIdLogLabel: "correlation_id", disableRequestLogging: true }),
    genReqId: (req) => {
      const given = req.headers["x-correlation-id"];
      return typeof given === "string" && CORRELATION_ID.test(given) ? given : randomUUID();
    },
    routerOptions: { ignoreTrailingSlash: true },
    // Runs before routing and before the request is logged, so a token in the query never reaches a log (S11).
    rewriteUrl: (req) => redactUrl(req.url ?? "/"),
    // A client that sends headers and then stalls or trickles its body is cut off with 408. Node checks
    // these deadlines only every connectionsCheckingInterval (30 s by default), and applies
    // requestTimeout only when headersTimeout is not longer, so all three are set.
    requestTimeout,
    http: {
      requestTimeout,
      headersTimeout: requestTimeout,
      connectionsCheckingInterval: Math.max(10, Math.min(1_000, Math.floor(requestTimeout / 10))),
      // Node answers an HTTP/1.1 request without Host with a bare 400 of its own; the hook below
      // answers it in the standard error body instead.
      requireHostHeader: false,
    },
    // Errors raised before routing answer in the standard error body too (U3).
    frameworkErrors: answerFrameworkError,
    clientErrorHandler: createClientErrorHandler(deps.log as FastifyBaseLogger),
  });
  app.addHook("onRequest", (request, reply, done) => {
    reply.header("x-correlation-id", request.id);
    // RFC 9112 §3.2: an HTTP/1.1 request without a Host header is answered 400.
    if (request.raw.httpVersion === "1.1" && request.headers.host === undefined) {
      done(new AppError("ERRORS.BAD_REQUEST", "The request has no Host header"));
      return;
    }
    done();
  });
  installRequestLog(app);
  app.setValidatorCompiler(validatorCompiler);
  // Responses are built by typed presenters; the zod response schemas document them (docs/decisions/http.md).
  app.setSerializerCompiler(() => (data) => JSON.stringify(data));

  await registerApiDocs(app);

  installErrorHandling(app);
  const tokens = createTokenIssuer({ secret: deps.tokenSecret, issuer: deps.issuer, clock: deps.clock });
  installAuthentication(app, tokens, (rider) => riderTokenRevoked(deps.db, rider));
  installNulGuard(app);
  const whitelists = createWhitelistService({
    db: deps.db,
    clock: deps.clock,
    log: deps.log,
    gateways: deps.gateways,
    options: deps.whitelists,
  });
  const accessLists = createAccessListService({ db: deps.db, clock: deps.clock });
  await installConsole(app, {
    db: deps.db,
    clock: deps.clock,
    options: deps.console,
    whitelists,
    accessLists,
  });
  installIdempotency(app, { db: deps.db, clock: deps.clock, policy: deps.idempotency });

  const locations = createLocationService({ db: deps.db, clock: deps.clock });
  const devices = createDeviceService({ db: deps.db, clock: deps.clock });
  const commands = createCommandService({
    db: deps.db,
    clock: deps.clock,
    gateways: deps.gateways,
    timeouts: deps.timeouts,
    log: deps.log,
    settled: deps.settled ?? createSettledNotifier(),
    waitPollMs: deps.commandWaitPollMs,
  });

  registerTokenRoute(app, { db: deps.db, tokens, clock: deps.clock });
  registerExternalUserRoutes(
    app,
    createUserService({ db: deps.db, clock: deps.clock, log: deps.log, tokens, options: deps.externalUsers }),
  );
  registerLocationRoutes(app, locations);
  registerLocationLinkRoutes(app, createLocationLinks({ db: deps.db, clock: deps.clock }));
  registerWhitelistRoutes(app, whitelists);
  registerDeviceRoutes(app, devices, commands);
  registerConsoleDeviceRoutes(app, { db: deps.db, devices, commands });
  registerPhotoRoutes(app, createPhotoService({ db: deps.db }));
  registerSessionRoutes(app, createSessionService({ db: deps.db, clock: deps.clock }));
  registerAccessListRoutes(app, accessLists);
  registerHealthRoutes(app, deps.isReady ?? (() => Promise.resolve(true)));
  app.get("/openapi.json", { config: { public: true }, schema: { hide: true } }, () => app.swagger());
  return app;
}
