import type { FastifyInstance } from "fastify";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import { z } from "zod";
import { ErrorBody } from "../../../shared/api/common.ts";
import type { Clock } from "../../../shared/time/clock.ts";
import { liveRepository } from "../../console/live-repository.ts";
import { createLiveStreams, type LiveStreamOptions, type LiveStreams } from "../../console/live-streams.ts";
import { createLiveWatch, type LiveWatchOptions } from "../../console/live-watch.ts";
import type { ConsoleSessions } from "../../staff/console-sessions.ts";
import type { Db } from "../../store/db.ts";
import { SESSION_COOKIE, staffSessionOf } from "../console-guard.ts";
import { ANY_ROUTE_ERRORS } from "../error-responses.ts";

declare module "fastify" {
  interface FastifyInstance {
    /** This process's console live streams: how many are open, and ending them all (tests cut them). */
    consoleLive: Pick<LiveStreams, "count" | "endAll">;
  }
}

/** The live stream's pace (docs/decisions/console.md). */
export type LiveOptions = LiveWatchOptions & LiveStreamOptions;

/** The live stream and the change watch behind it; the watch's timer stops when the app closes. */
export function installConsoleLive(
  app: FastifyInstance,
  deps: { db: Db; clock: Clock; sessions: ConsoleSessions; options?: LiveOptions },
) {
  const watch = createLiveWatch({
    db: deps.db,
    clock: deps.clock,
    ...deps.options,
    log: (err) => app.log.error({ err }, "console live watch: a poll failed"),
  });
  const repo = liveRepository(deps.db);
  const streams = createLiveStreams({
    watch,
    clock: deps.clock,
    operatorsOf: async (staff) => (staff.operatorId === null ? repo.operatorIds() : [staff.operatorId]),
    options: deps.options,
  });
  registerConsoleLiveRoutes(app, { streams, sessions: deps.sessions });
  app.addHook("onClose", (_app, done) => {
    watch.close();
    done();
  });
}

const errors = { ...ANY_ROUTE_ERRORS, 401: ErrorBody, 429: ErrorBody };

/**
 * GET /console/api/live: the signed-in staff member's server-sent events (docs/decisions/console.md): a
 * `location` event when one of its operators' locations changed, `alarms`, `sessions`, `commands`, `audit`
 * when one of those did, and `ready` (with the cloud's time) once the stream watches: the page then reads
 * afresh. Any role; a superadmin's stream carries every operator's events.
 */
export function registerConsoleLiveRoutes(
  app: FastifyInstance,
  deps: { streams: LiveStreams; sessions: ConsoleSessions },
) {
  const r = app.withTypeProvider<ZodTypeProvider>();
  app.decorate("consoleLive", { count: deps.streams.count, endAll: deps.streams.endAll });
  // Open streams would hold the server's close; their browsers reconnect to another replica.
  app.addHook("preClose", (done) => {
    deps.streams.endAll();
    done();
  });

  r.get("/console/api/live", {
    config: { public: true },
    schema: { hide: true, response: { 200: z.string(), ...errors } },
    handler: async (request, reply) => {
      const session = staffSessionOf(request);
      deps.streams.admit(session);
      const token = request.cookies[SESSION_COOKIE] ?? "";
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(reply.getHeaders())) if (v !== undefined) headers[k] = String(v);
      reply.hijack();
      await deps.streams.serve(session, reply.raw, {
        headers,
        stillOpen: async () => (await deps.sessions.resolve(token)) !== null,
      });
    },
  });
}
