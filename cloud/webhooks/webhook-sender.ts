import type { Clock } from "../../shared/time/clock.ts";
import type { Resolve } from "../outbound/callback-address.ts";
import { createGuardedPost, type PostFailure } from "../outbound/guarded-post.ts";

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
export type SendOutcome = { kind: "answered"; status: number } | PostFailure;

/** The outbound HTTP port of the delivery worker. */
export type WebhookSender = {
  send(req: WebhookRequest): Promise<SendOutcome>;
  close(): Promise<void>;
};

/**
 * POSTs webhooks through the cloud's guarded outbound POST (cloud/outbound/guarded-post.ts): at most
 * `timeoutMs` on the injected clock, no redirect, public addresses only unless the endpoint allows private
 * ones. The receiver's body is never kept.
 */
export function createWebhookSender(deps: {
  clock: Clock;
  timeoutMs?: number;
  /** Name resolution (tests); the system's resolver otherwise. */
  resolve?: Resolve;
  /** Sockets kept per receiver. */
  connections?: number;
}): WebhookSender {
  const poster = createGuardedPost({
    clock: deps.clock,
    timeoutMs: deps.timeoutMs ?? WEBHOOK_TIMEOUT_MS,
    connections: deps.connections ?? 8,
    resolve: deps.resolve,
  });
  return {
    async send(req) {
      const res = await poster.post(
        { url: req.url, allowPrivate: req.allowPrivate },
        { headers: { ...req.headers, "content-type": "application/json" }, body: req.body },
        async (answer) => {
          await answer.body.dump({ limit: DRAIN_LIMIT_BYTES }).catch(() => undefined);
          return answer.statusCode;
        },
      );
      return res.kind === "answered" ? { kind: "answered", status: res.value } : res;
    },
    close: () => poster.close(),
  };
}
