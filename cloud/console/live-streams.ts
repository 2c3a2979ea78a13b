import type { ServerResponse } from "node:http";
import { AppError } from "../../shared/api/errors.ts";
import type { Clock } from "../../shared/time/clock.ts";
import type { SignedIn } from "../staff/console-sessions.ts";
import type { LiveEvent, LiveWatch } from "./live-watch.ts";

/** A staff session's open streams at most, per process: a few tabs, not a leak of connections. */
export const MAX_STREAMS_PER_SESSION = 4;

export type LiveStreamOptions = {
  /** How long the browser waits before reconnecting, in ms (the stream's `retry:`; default 2000). */
  retryMs?: number;
  /** How often a comment keeps the connection open through proxies, and the session is checked again. */
  keepAliveMs?: number;
};

/** One `text/event-stream` frame (one data line: the JSON has no newline). */
export const frame = (event: string, data: unknown) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;

/**
 * The open server-sent-event streams of this process: each is one staff session's, fed by the live watch
 * with its operators' events, kept alive with a comment, and ended when the client goes, the session ends
 * (checked at each keep-alive, without moving its idle time), or the app closes.
 */
export function createLiveStreams(deps: {
  watch: LiveWatch;
  clock: Clock;
  /** The operators a staff member's stream carries (a superadmin's: every operator). */
  operatorsOf(staff: SignedIn["staff"]): Promise<string[]>;
  options?: LiveStreamOptions;
}) {
  const retryMs = deps.options?.retryMs ?? 2_000;
  const keepAliveMs = deps.options?.keepAliveMs ?? 15_000;
  const open = new Map<ServerResponse, string>();
  const perSession = (sessionId: string) => [...open.values()].filter((s) => s === sessionId).length;

  return {
    /** Refuses (429, before anything is written) a session that already holds its streams. */
    admit(session: SignedIn) {
      if (perSession(session.sessionId) >= MAX_STREAMS_PER_SESSION)
        throw new AppError(
          "ERRORS.RATE_LIMITED",
          `At most ${MAX_STREAMS_PER_SESSION} live streams per console session; close another tab`,
          {},
          { "retry-after": String(Math.ceil(retryMs / 1000)) },
        );
    },

    /**
     * Streams to `res` (whose headers are not sent yet) until one side ends it; `stillOpen` says whether the
     * session is (not signed out, revoked or idle too long).
     */
    async serve(
      session: SignedIn,
      res: ServerResponse,
      opts: { headers: Record<string, string>; stillOpen: () => Promise<boolean> },
    ) {
      open.set(res, session.sessionId);
      res.writeHead(200, {
        ...opts.headers,
        "content-type": "text/event-stream; charset=utf-8",
        "cache-control": "no-cache, no-store, no-transform",
        // A buffering proxy (nginx) would hold the events back.
        "x-accel-buffering": "no",
      });
      res.write(`retry: ${retryMs}\n\n`);
      const send = (e: LiveEvent) => res.write(frame(e.name, e.data));
      const sub = deps.watch.subscribe(await deps.operatorsOf(session.staff), send);
      const keepAlive = setInterval(() => {
        res.write(": keep-alive\n\n");
        opts.stillOpen().then(
          (ok) => ok || res.end(),
          () => {},
        );
      }, keepAliveMs);
      keepAlive.unref();
      res.once("close", () => {
        clearInterval(keepAlive);
        sub.stop();
        open.delete(res);
      });
      if (res.destroyed) return res.emit("close");
      await sub.ready;
      // From here every change is pushed; the page reads afresh what came before (and the cloud's time).
      if (!res.writableEnded) res.write(frame("ready", { now: deps.clock.now().toISOString() }));
    },

    /** How many streams are open in this process. */
    count: () => open.size,

    /** Ends every stream (the app closing, or a test cutting them); browsers reconnect after `retry`. */
    endAll() {
      for (const res of open.keys()) res.end();
    },
  };
}

export type LiveStreams = ReturnType<typeof createLiveStreams>;
