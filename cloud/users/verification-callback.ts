import type { Clock } from "../../shared/time/clock.ts";
import type { Resolve } from "../outbound/callback-address.ts";
import { createGuardedPost, type PostFailure } from "../outbound/guarded-post.ts";
import { newMessageId } from "../webhooks/webhook-payload.ts";
import { signWebhook } from "../webhooks/webhook-signature.ts";

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
export type CallbackOutcome = { kind: "answered"; status: number; body: AnswerBody } | PostFailure;

export type CallbackRequest = {
  url: string;
  payload: Record<string, unknown>;
  allowPrivateAddresses: boolean;
  /** The operator's signing secrets, newest first; none: nothing is sent. */
  secrets: readonly string[];
  /** Read (up to the limit) and parse the body of a 2xx answer. */
  readBody: boolean;
};

/**
 * POSTs JSON to an operator's verification endpoint through the guarded outbound POST
 * (cloud/outbound/guarded-post.ts: the clock's deadline, no redirect, public addresses unless allowed),
 * reading at most `maxBodyBytes` of a 2xx answer's body. Every callback is signed the Standard Webhooks
 * way, as webhooks are (webhook-signature.ts): a fresh `msg_…` id, the clock's timestamp, and a signature
 * of the exact body under each of the operator's secrets, so the operator can tell our callbacks from
 * anyone's and refuse a replay (docs/verification-callbacks.md).
 */
export function createCallbackClient(deps: {
  clock: Clock;
  timeoutMs?: number;
  maxBodyBytes?: number;
  /** Sockets kept per operator server. */
  connections?: number;
  /** Name resolution (tests); the system's resolver otherwise. */
  resolve?: Resolve;
}) {
  const timeoutMs = deps.timeoutMs ?? CALLBACK_TIMEOUT_MS;
  const maxBodyBytes = deps.maxBodyBytes ?? CALLBACK_BODY_LIMIT_BYTES;
  const poster = createGuardedPost({
    clock: deps.clock,
    timeoutMs,
    connections: deps.connections ?? 64,
    resolve: deps.resolve,
  });

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
      // Stored before callbacks were signed, and not declared again since: an unsigned callback would
      // teach the operator to accept unsigned ones.
      if (req.secrets.length === 0)
        return {
          kind: "refused",
          reason: "no signing secret: apply the site manifest's external_users again",
        };
      const body = JSON.stringify(req.payload);
      const signature = signWebhook({ id: newMessageId(), at: deps.clock.now(), body, secrets: req.secrets });
      const res = await poster.post(
        { url: req.url, allowPrivate: req.allowPrivateAddresses },
        {
          headers: { "content-type": "application/json", accept: "application/json", ...signature },
          body,
        },
        async (answer): Promise<{ status: number; body: AnswerBody }> => {
          const ok = answer.statusCode >= 200 && answer.statusCode < 300;
          if (!req.readBody || !ok) {
            await answer.body.dump({ limit: maxBodyBytes }).catch(() => undefined);
            return { status: answer.statusCode, body: { kind: "unread" } };
          }
          const length = Number(answer.headers["content-length"] ?? 0);
          const body = await readJson(answer.body, Number.isFinite(length) ? length : 0);
          return { status: answer.statusCode, body };
        },
      );
      return res.kind === "answered" ? { kind: "answered", ...res.value } : res;
    },

    /** Drops every pooled connection at once (in-flight callbacks fail). */
    close: (): Promise<void> => poster.close(),
  };
}

export type CallbackClient = ReturnType<typeof createCallbackClient>;
