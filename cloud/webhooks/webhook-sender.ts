import { Agent, request } from "undici";
import type { Clock } from "../../shared/clock.ts";
import { PACKAGE_VERSION } from "../../shared/version.ts";
import {
  AddressRefusedError,
  guardedLookup,
  literalRefusal,
  type Resolve,
} from "../users/callback-address.ts";

/** A receiver has this long to answer (connect, status and body) before the attempt counts as failed. */
export const WEBHOOK_TIMEOUT_MS = 10_000;
/** The most of a receiver's answer read (and thrown away): the status is the whole answer. */
const DRAIN_LIMIT_BYTES = 16 * 1024;

/** One POST of a signed webhook. */
export type WebhookRequest = {
  url: string;
  allowPrivate: boolean;
  headers: Record<string, string>;
  body: string;
};

/** How an attempt ended; only an answer has a status. */
export type SendOutcome =
  | { kind: "answered"; status: number }
  | { kind: "timed-out" }
  /** The address was not one the endpoint may reach; nothing was sent. */
  | { kind: "refused"; reason: string }
  | { kind: "unreachable"; reason: string };

/** The outbound HTTP port of the delivery worker. */
export type WebhookSender = {
  send(req: WebhookRequest): Promise<SendOutcome>;
  close(): Promise<void>;
};

const TIMEOUT_CODES = new Set(["UND_ERR_CONNECT_TIMEOUT", "UND_ERR_HEADERS_TIMEOUT", "UND_ERR_BODY_TIMEOUT"]);

function causes(err: unknown): unknown[] {
  const out: unknown[] = [];
  for (let e = err; e && out.length < 5; e = (e as { cause?: unknown }).cause) out.push(e);
  return out;
}

/**
 * POSTs webhooks with undici: at most `timeoutMs` in all on the injected clock, no redirect followed
 * (undici's `request` follows none), and only to public addresses unless the endpoint allows private ones;
 * a name is resolved once by the connection's own lookup, which refuses private answers (the SSRF guard
 * of the verification callbacks, cloud/users/callback-address.ts). The receiver's body is never kept.
 */
export function createWebhookSender(o: {
  clock: Clock;
  timeoutMs?: number;
  /** Name resolution (tests); the system's resolver otherwise. */
  resolve?: Resolve;
  /** Sockets kept per receiver. */
  connections?: number;
}): WebhookSender {
  const timeoutMs = o.timeoutMs ?? WEBHOOK_TIMEOUT_MS;
  // undici's own timers are a real-time safety net only; the clock's deadline below is the rule.
  const safetyNetMs = timeoutMs + 1_000;
  const agent = (allowPrivate: boolean) =>
    new Agent({
      connect: { lookup: guardedLookup({ allowPrivate, resolve: o.resolve }), timeout: safetyNetMs },
      headersTimeout: safetyNetMs,
      bodyTimeout: safetyNetMs,
      connections: o.connections ?? 8,
    });
  const agents = { public: agent(false), private: agent(true) };

  return {
    async send(req) {
      let url: URL;
      try {
        url = new URL(req.url);
      } catch {
        return { kind: "refused", reason: "not a URL" };
      }
      const literal = literalRefusal(url, req.allowPrivate);
      if (literal) return { kind: "refused", reason: literal.message };
      const abort = new AbortController();
      let timedOut = false;
      const timer = o.clock.setTimer(timeoutMs, () => {
        timedOut = true;
        abort.abort();
      });
      try {
        const res = await request(url, {
          method: "POST",
          dispatcher: req.allowPrivate ? agents.private : agents.public,
          signal: abort.signal,
          headers: {
            ...req.headers,
            "content-type": "application/json",
            "user-agent": `parking-cloud/${PACKAGE_VERSION}`,
          },
          body: req.body,
        });
        await res.body.dump({ limit: DRAIN_LIMIT_BYTES }).catch(() => undefined);
        return { kind: "answered", status: res.statusCode };
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
        o.clock.clearTimer(timer);
      }
    },

    async close() {
      await Promise.all([agents.public.destroy(), agents.private.destroy()]);
    },
  };
}
