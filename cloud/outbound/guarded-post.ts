import { Agent, type Dispatcher, request } from "undici";
import { packageVersion } from "../../shared/node/version.ts";
import type { Clock } from "../../shared/time/clock.ts";
import { AddressRefusedError, guardedLookup, literalRefusal, type Resolve } from "./callback-address.ts";

/** How a POST ended without an answer to read. */
export type PostFailure =
  | { kind: "timed-out" }
  /** The address was not one the caller may reach; nothing was sent. */
  | { kind: "refused"; reason: string }
  /** No answer: name not found, connection refused or reset, TLS failure, a broken response. */
  | { kind: "unreachable"; reason: string };

const TIMEOUT_CODES = new Set(["UND_ERR_CONNECT_TIMEOUT", "UND_ERR_HEADERS_TIMEOUT", "UND_ERR_BODY_TIMEOUT"]);

function causes(err: unknown): unknown[] {
  const out: unknown[] = [];
  for (let e = err; e && out.length < 5; e = (e as { cause?: unknown }).cause) out.push(e);
  return out;
}

/**
 * The cloud's outbound POST to integrators' servers (verification callbacks, webhooks), with undici: at
 * most `timeoutMs` in all (connect, answer and what `read` takes of the body), timed by the injected clock;
 * no redirect followed (undici's `request` follows none); only to public addresses unless the caller allows
 * private ones — the name is resolved once by the connection's own lookup, which refuses private answers
 * (callback-address.ts).
 */
export function createGuardedPost(deps: {
  clock: Clock;
  timeoutMs: number;
  /** Sockets kept per server. */
  connections: number;
  /** Name resolution (tests); the system's resolver otherwise. */
  resolve?: Resolve;
}) {
  // undici's own timers are a real-time safety net only; the clock's deadline below is the rule.
  const safetyNetMs = deps.timeoutMs + 1_000;
  const agent = (allowPrivate: boolean) =>
    new Agent({
      connect: { lookup: guardedLookup({ allowPrivate, resolve: deps.resolve }), timeout: safetyNetMs },
      headersTimeout: safetyNetMs,
      bodyTimeout: safetyNetMs,
      connections: deps.connections,
    });
  const agents = { public: agent(false), private: agent(true) };

  return {
    /** POSTs `body`; `read` turns the answer into what the caller keeps (it must consume the body). */
    async post<T>(
      target: { url: string; allowPrivate: boolean },
      init: { headers: Record<string, string>; body: string },
      read: (res: Dispatcher.ResponseData) => Promise<T>,
    ): Promise<{ kind: "answered"; value: T } | PostFailure> {
      let url: URL;
      try {
        url = new URL(target.url);
      } catch {
        return { kind: "refused", reason: "not a URL" };
      }
      const literal = literalRefusal(url, target.allowPrivate);
      if (literal) return { kind: "refused", reason: literal.message };
      const abort = new AbortController();
      let timedOut = false;
      const timer = deps.clock.setTimer(deps.timeoutMs, () => {
        timedOut = true;
        abort.abort();
      });
      try {
        const res = await request(url, {
          method: "POST",
          dispatcher: target.allowPrivate ? agents.private : agents.public,
          signal: abort.signal,
          headers: { ...init.headers, "user-agent": `parking-cloud/${packageVersion()}` },
          body: init.body,
        });
        return { kind: "answered", value: await read(res) };
      } catch (err) {
        if (timedOut) return { kind: "timed-out" };
        const chain = causes(err);
        const refused = chain.find((e) => e instanceof AddressRefusedError);
        if (refused) return { kind: "refused", reason: (refused as AddressRefusedError).message };
        if (chain.some((e) => TIMEOUT_CODES.has(String((e as { code?: unknown }).code))))
          return { kind: "timed-out" };
        const first = chain[0] as { code?: unknown; message?: unknown } | undefined;
        const code = typeof first?.code === "string" ? `${first.code}: ` : "";
        return { kind: "unreachable", reason: `${code}${String(first?.message ?? err)}` };
      } finally {
        deps.clock.clearTimer(timer);
      }
    },

    /** Drops every pooled connection at once (requests in flight fail). */
    async close(): Promise<void> {
      await Promise.all([agents.public.destroy(), agents.private.destroy()]);
    },
  };
}
