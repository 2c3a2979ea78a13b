import type { FastifyInstance } from "fastify";
import type { Clock } from "../../shared/time/clock.ts";
import type { AccessListService } from "../access-lists/access-list-service.ts";
import { createAlarmService } from "../alarms/alarm-service.ts";
import { createConsoleAccessLists } from "../console/console-access-lists.ts";
import { consoleAssets } from "../console/console-assets.ts";
import { createConsoleLocations } from "../console/console-locations.ts";
import { registerConsolePages } from "../console/console-pages.ts";
import { createConsoleRiders } from "../console/console-riders.ts";
import { createConsoleWebhooks } from "../console/console-webhooks.ts";
import { createConsoleWhitelists } from "../console/console-whitelists.ts";
import type { DemoHardware } from "../console/demo-hardware.ts";
import { createSessionService } from "../sessions/session-service.ts";
import { type ConsoleSessionOptions, createConsoleSessions } from "../staff/console-sessions.ts";
import { createStaffService } from "../staff/staff-service.ts";
import type { Db } from "../store/db.ts";
import type { WhitelistService } from "../whitelists/whitelist-service.ts";
import { installConsoleGuard } from "./console-guard.ts";
import { registerConsoleAccessListRoutes } from "./routes/console-access-lists.ts";
import { registerConsoleAlarmRoutes } from "./routes/console-alarms.ts";
import { registerConsoleAuditRoutes } from "./routes/console-audit.ts";
import { registerConsoleDemoRoutes } from "./routes/console-demo.ts";
import { installConsoleLive, type LiveOptions } from "./routes/console-live.ts";
import { registerConsoleLocationRoutes } from "./routes/console-locations.ts";
import { registerConsoleRiderRoutes } from "./routes/console-riders.ts";
import { registerConsoleSessionRoutes } from "./routes/console-session.ts";
import { registerConsoleSessionsRoutes } from "./routes/console-sessions.ts";
import { registerConsoleWebhookRoutes } from "./routes/console-webhooks.ts";
import { registerConsoleWhitelistRoutes } from "./routes/console-whitelists.ts";

/** The console's session settings, and the public base URL (BASE_URL) when one is configured. */
export type ConsoleOptions = ConsoleSessionOptions & {
  baseUrl?: string;
  live?: LiveOptions;
  /** The demo's simulated hardware (`npm start` only): installs the demo hardware panel's routes. */
  demoHardware?: DemoHardware;
  /** The overview map's tile URL template (CONSOLE_MAP_TILES); no map without it. */
  mapTiles?: string;
};

/**
 * The operator console: its pages, and its API of staff sessions by cookie, CSRF-guarded
 * (docs/decisions/console.md).
 */
export async function installConsole(
  app: FastifyInstance,
  deps: {
    db: Db;
    clock: Clock;
    options?: ConsoleOptions;
    /** The public API's services the console acts through (the same instances, the same gateway link). */
    whitelists: WhitelistService;
    accessLists: AccessListService;
  },
) {
  const sessions = createConsoleSessions({
    db: deps.db,
    clock: deps.clock,
    staff: createStaffService({ db: deps.db, clock: deps.clock }),
    options: deps.options,
  });
  const baseUrl = deps.options?.baseUrl;
  await installConsoleGuard(app, { sessions, baseUrl });
  const demoHardware = deps.options?.demoHardware;
  const mapTiles = deps.options?.mapTiles;
  registerConsoleSessionRoutes(app, {
    sessions,
    baseUrl,
    demoPanel: demoHardware !== undefined,
    mapTiles,
  });
  registerConsoleLocationRoutes(app, createConsoleLocations({ db: deps.db, clock: deps.clock }));
  registerConsoleAlarmRoutes(app, {
    db: deps.db,
    alarms: createAlarmService({ db: deps.db, clock: deps.clock }),
  });
  const sessionService = createSessionService({ db: deps.db, clock: deps.clock });
  registerConsoleSessionsRoutes(app, sessionService);
  registerConsoleAuditRoutes(app, deps.db);
  registerConsoleWhitelistRoutes(app, {
    views: createConsoleWhitelists({ db: deps.db, clock: deps.clock, whitelists: deps.whitelists }),
    whitelists: deps.whitelists,
  });
  registerConsoleAccessListRoutes(app, {
    views: createConsoleAccessLists({ db: deps.db, clock: deps.clock, lists: deps.accessLists }),
    lists: deps.accessLists,
  });
  installConsoleLive(app, { db: deps.db, clock: deps.clock, sessions, options: deps.options?.live });
  registerConsoleRiderRoutes(
    app,
    createConsoleRiders({ db: deps.db, clock: deps.clock, sessions: sessionService }),
  );
  registerConsoleWebhookRoutes(app, createConsoleWebhooks({ db: deps.db, clock: deps.clock }));
  if (demoHardware) registerConsoleDemoRoutes(app, demoHardware);
  await registerConsolePages(app, await consoleAssets(), { mapTiles });
}
