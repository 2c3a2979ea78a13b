import type { Logger } from "pino";
import type { Clock, TimerHandle } from "../../shared/time/clock.ts";
import type { Resolve } from "../outbound/callback-address.ts";
import type { Db } from "../store/db.ts";
import { closedWindows } from "./aggregation-windows.ts";
import { afterFailure } from "./retry-schedule.ts";
import type { DueMessage } from "./webhook-messages.ts";
import { type Settlement, webhookQueue } from "./webhook-queue.ts";
import {
  createWebhookSender,
  type SendOutcome,
  WEBHOOK_TIMEOUT_MS,
  type WebhookSender,
} from "./webhook-sender.ts";
import { signWebhook } from "./webhook-signature.ts";

/** Endpoints sent to at once by one process; the others wait for the next tick. */
const MAX_PARALLEL_ENDPOINTS = 16;
/** Heads looked at per tick. */
const HEADS_PER_TICK = 200;
/** Messages one endpoint's drain sends back to back before it lets the next tick decide again. */
const DRAIN_BATCH = 100;
/** How often a process forgets old settled messages. */
const PRUNE_EVERY_MS = 3_600_000;

export type WebhookDeliveryOptions = {
  db: Db;
  clock: Clock;
  log: Logger;
  /** Outbound HTTP; undici with the SSRF guard by default. The worker closes it when it stops. */
  sender?: WebhookSender;
  /** Name resolution for the default sender (tests). */
  resolve?: Resolve;
  /** A receiver's time to answer (default 10 s). */
  timeoutMs?: number;
  /** Time between ticks (default 500 ms, so direct delivery stays under a second). */
  everyMs?: number;
};

export type WebhookDelivery = {
  /** One pass now: flushes closed windows, sends what is due, and waits for every send in flight. */
  tick(): Promise<void>;
  stop(): Promise<void>;
};

function describe(outcome: SendOutcome): { statusCode: number | null; error: string | null } {
  switch (outcome.kind) {
    case "answered":
      return {
        statusCode: outcome.status,
        error: outcome.status >= 200 && outcome.status < 300 ? null : `HTTP ${outcome.status}`,
      };
    case "timed-out":
      return { statusCode: null, error: "no answer in time" };
    case "refused":
      return { statusCode: null, error: `address refused: ${outcome.reason}` };
    case "unreachable":
      return { statusCode: null, error: `unreachable: ${outcome.reason}` };
  }
}

/**
 * The delivery worker (flow 5's last step): on every tick of the injected clock it turns closed aggregation
 * windows into messages and sends each endpoint's oldest due message, then the ones behind it while they
 * succeed. 2xx delivers; anything else is retried with exponential backoff (retry-schedule.ts) until the
 * message has been queued a day, then it is dead; 410 Gone disables the endpoint. Each message is claimed
 * by compare-and-set before it is sent, so replicas sharing the store never send one twice at once.
 */
export function startWebhookDelivery(options: WebhookDeliveryOptions): WebhookDelivery {
  const { db, clock, log } = options;
  const everyMs = options.everyMs ?? 500;
  const timeoutMs = options.timeoutMs ?? WEBHOOK_TIMEOUT_MS;
  // A claim outlives any attempt (the sender gives up at the timeout); a dead worker's claim lapses.
  const leaseMs = timeoutMs + 50_000;
  const sender = options.sender ?? createWebhookSender({ clock, timeoutMs, resolve: options.resolve });
  const queue = webhookQueue(db);
  const drains = new Map<string, Promise<void>>();
  let passes: Promise<void> = Promise.resolve();
  let timer: TimerHandle | null = null;
  let stopped = false;
  let prunedAt = Number.NEGATIVE_INFINITY;

  /** One attempt at a head; true when the head is settled for good (delivered or dead) and the next may go. */
  async function attempt(m: DueMessage): Promise<boolean> {
    const at = clock.now();
    const leaseUntil = new Date(at.getTime() + leaseMs);
    if (!(await queue.claim(m, leaseUntil))) return false;
    const headers = signWebhook({ id: m.id, at, body: m.payload, secrets: m.secrets });
    const outcome = await sender.send({ url: m.url, allowPrivate: m.allowPrivate, headers, body: m.payload });
    const now = clock.now();
    const { statusCode, error } = describe(outcome);
    const attempts = m.attempts + 1;
    let settlement: Settlement;
    if (error === null) settlement = { kind: "delivered" };
    else if (statusCode === 410) settlement = { kind: "gone", error };
    else {
      const next = afterFailure({ attempts, queuedAt: new Date(m.queuedAt), now });
      settlement = next.kind === "dead" ? { kind: "dead", error } : { kind: "retry", at: next.at, error };
    }
    await queue.settle(
      m,
      { leaseUntil, at, statusCode, error, durationMs: now.getTime() - at.getTime() },
      settlement,
      now,
    );
    const ctx = { message_id: m.id, endpoint_id: m.endpointId, attempt: attempts };
    if (settlement.kind === "delivered") log.debug(ctx, "webhook delivered");
    else if (settlement.kind === "retry")
      log.warn({ ...ctx, error, retry_at: settlement.at.toISOString() }, "webhook attempt failed");
    else if (settlement.kind === "dead") log.error({ ...ctx, error }, "webhook dead after a day of retries");
    else
      log.error(
        ctx,
        "webhook endpoint answered 410 Gone: disabled until the site manifest declares it again",
      );
    return settlement.kind === "delivered" || settlement.kind === "dead";
  }

  /** Sends an endpoint's queue in order while its heads settle. */
  async function drain(first: DueMessage): Promise<void> {
    let m: DueMessage | undefined = first;
    for (let n = 0; m && n < DRAIN_BATCH && !stopped; n++) {
      if (!(await attempt(m))) return;
      [m] = await queue.dueHeads(clock.now(), { limit: 1, endpointId: m.endpointId });
    }
  }

  async function pass(): Promise<void> {
    if (stopped) return;
    if (clock.now().getTime() - prunedAt >= PRUNE_EVERY_MS) {
      prunedAt = clock.now().getTime();
      await queue.prune(clock.now());
    }
    for (const group of closedWindows(await queue.bufferedGroups(), clock.now()))
      await queue.flush(group, clock.now());
    for (const head of await queue.dueHeads(clock.now(), { limit: HEADS_PER_TICK })) {
      if (stopped || drains.size >= MAX_PARALLEL_ENDPOINTS) break;
      if (drains.has(head.endpointId)) continue;
      const running = drain(head)
        .catch((err: unknown) => log.error({ err, endpoint_id: head.endpointId }, "webhook delivery failed"))
        .finally(() => drains.delete(head.endpointId));
      drains.set(head.endpointId, running);
    }
  }

  /** Passes never overlap in one process (replicas are kept apart by the claims). */
  function runPass(): Promise<void> {
    passes = passes.then(pass, pass);
    return passes;
  }

  function schedule() {
    timer = clock.setTimer(everyMs, () => {
      runPass()
        .catch((err: unknown) => log.error({ err }, "webhook delivery tick failed"))
        .finally(() => {
          if (!stopped) schedule();
        });
    });
  }
  schedule();

  async function settled() {
    while (drains.size > 0) await Promise.all([...drains.values()]);
  }

  return {
    async tick() {
      await runPass();
      await settled();
    },
    async stop() {
      stopped = true;
      if (timer) clock.clearTimer(timer);
      timer = null;
      // Closing the sender cuts attempts in flight short; they are settled as failures and retried later.
      await sender.close();
      await passes.catch(() => undefined);
      await settled();
    },
  };
}
