import { Agent, request } from "undici";
import type { Clock } from "../../shared/clock.ts";
import { PACKAGE_VERSION } from "../../shared/version.ts";
import { AddressRefusedError, guardedLookup, literalRefusal, type Resolve } from "./callback-address.ts";

/** Spec (Limits): the integrator's verification endpoints must answer within 5 seconds. */
export const CALLBACK_TIMEOUT_MS = 5_000;
/** The most of an answer's body read; a sign-in answer is a small JSON object. */
export const CALLBACK_BODY_LIMIT_BYTES = 16 * 1024;

/** What an answer's body held, when it was read. */
export type AnswerBody =
  | { kind: "json"; value: unknown }
  | { kind: "not-json" }
  | { kind: "too-large" }
  /** Not read: the caller did not need it, or the answer was not a 2xx. */
  | { kind: "unread" };

/** How a verification callback ended. */
export type CallbackOutcome =
  | { kind: "answered"; status: number; body: AnswerBody }
  | { kind: "timed-out" }
  /** The address was not one this operator's callbacks may reach; nothing was sent. */
  | { kind: "refused"; reason: string }
  /** No answer: name not found, connection refused or reset, TLS failure, a broken response. */
  | { kind: "unreachable"; reason: string };

export type CallbackRequest = {
  url: string;
  payload: Record<string, unknown>;
  allowPrivateAddresses: boolean;
  /** Read (up to the limit) and parse the body of a 2xx answer. */
  readBody: boolean;
};

const TIMEOUT_CODES = new Set(["UND_ERR_CONNECT_TIMEOUT", "UND_ERR_HEADERS_TIMEOUT", "UND_ERR_BODY_TIMEOUT"]);

function causes(err: unknown): unknown[] {
  const out: unknown[] = [];
  for (let e = err; e && out.length < 5; e = (e as { cause?: unknown }).cause) out.push(e);
  return out;
}

/**
 * POSTs JSON to an operator's verification endpoint: at most `timeoutMs` in all (connect, answer and body,
 * timed by the injected clock), no redirect followed (undici's `request` follows none), at most
 * `maxBodyBytes` of body read, and only to public addresses unless the operator allows private ones; the
 * name is resolved once by the connection's own lookup, which refuses private answers (callback-address.ts).
 */
export function createCallbackClient(o: {
  clock: Clock;
  timeoutMs?: number;
  maxBodyBytes?: number;
  /** Sockets kept per operator server. */
  connections?: number;
  /** Name resolution (tests); the system's resolver otherwise. */
  resolve?: Resolve;
}) {
  const timeoutMs = o.timeoutMs ?? CALLBACK_TIMEOUT_MS;
  const maxBodyBytes = o.maxBodyBytes ?? CALLBACK_BODY_LIMIT_BYTES;
  // undici's own timers are a real-time safety net only; the clock's deadline below is the rule.
  const safetyNetMs = timeoutMs + 1_000;
  const agent = (allowPrivate: boolean) =>
    new Agent({
      connect: { lookup: guardedLookup({ allowPrivate, resolve: o.resolve }), timeout: safetyNetMs },
      headersTimeout: safetyNetMs,
      bodyTimeout: safetyNetMs,
      connections: o.connections ?? 64,
    });
  const agents = { public: agent(false), private: agent(true) };

  async function readJson(body: AsyncIterable<Buffer> & { destroy(): void }, length: number) {
    if (length > maxBodyBytes) {
      body.destroy();
      return { kind: "too-large" } as const;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of body) {
      size += chunk.length;
      if (size > maxBodyBytes) {
        body.destroy();
        return { kind: "too-large" } as const;
      }
      chunks.push(chunk);
    }
    try {
      return { kind: "json", value: JSON.parse(Buffer.concat(chunks).toString("utf8")) as unknown } as const;
    } catch {
      return { kind: "not-json" } as const;
    }
  }

  return {
    timeoutMs,

    async post(req: CallbackRequest): Promise<CallbackOutcome> {
      const url = new URL(req.url);
      const literal = literalRefusal(url, req.allowPrivateAddresses);
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
          dispatcher: req.allowPrivateAddresses ? agents.private : agents.public,
          signal: abort.signal,
          headers: {
            "content-type": "application/json",
            accept: "application/json",
            "user-agent": `parking-cloud/${PACKAGE_VERSION}`,
          },
          body: JSON.stringify(req.payload),
        });
        const ok = res.statusCode >= 200 && res.statusCode < 300;
        if (!req.readBody || !ok) {
          await res.body.dump({ limit: maxBodyBytes }).catch(() => undefined);
          return { kind: "answered", status: res.statusCode, body: { kind: "unread" } };
        }
        const length = Number(res.headers["content-length"] ?? 0);
        const body = await readJson(res.body, Number.isFinite(length) ? length : 0);
        return { kind: "answered", status: res.statusCode, body };
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

    /** Drops every pooled connection at once (in-flight callbacks fail). */
    async close(): Promise<void> {
      await Promise.all([agents.public.destroy(), agents.private.destroy()]);
    },
  };
}

export type CallbackClient = ReturnType<typeof createCallbackClient>;
