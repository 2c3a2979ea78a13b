import type { FastifyInstance } from "fastify";
import type { Clock } from "../../shared/time/clock.ts";
import { createAlarmService } from "../alarms/alarm-service.ts";
import { consoleAssets } from "../console/console-assets.ts";
import { createConsoleLocations } from "../console/console-locations.ts";
import { registerConsolePages } from "../console/console-pages.ts";
import type { DemoHardware } from "../console/demo-hardware.ts";
import { createSessionService } from "../sessions/session-service.ts";
import { type ConsoleSessionOptions, createConsoleSessions } from "../staff/console-sessions.ts";
import { createStaffService } from "../staff/staff-service.ts";
import type { Db } from "../store/db.ts";
import { installConsoleGuard } from "./console-guard.ts";
import { registerConsoleAlarmRoutes } from "./routes/console-alarms.ts";
import { registerConsoleAuditRoutes } from "./routes/console-audit.ts";
import { registerConsoleDemoRoutes } from "./routes/console-demo.ts";
import { registerConsoleLocationRoutes } from "./routes/console-locations.ts";
import { registerConsoleSessionRoutes } from "./routes/console-session.ts";
import { registerConsoleSessionsRoutes } from "./routes/console-sessions.ts";

/** The console's session settings, and the public base URL (BASE_URL) when one is configured. */
export type ConsoleOptions = ConsoleSessionOptions & {
  baseUrl?: string;
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
  deps: { db: Db; clock: Clock; options?: ConsoleOptions },
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
  registerConsoleSessionsRoutes(app, createSessionService({ db: deps.db, clock: deps.clock }));
  registerConsoleAuditRoutes(app, deps.db);
  if (demoHardware) registerConsoleDemoRoutes(app, demoHardware);
  await registerConsolePages(app, await consoleAssets(), { mapTiles });
}
