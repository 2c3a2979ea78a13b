import type { WebhookMessagePayload, WebhookMessageType } from "../../shared/api/webhook.ts";
import { recordAudit } from "../audit/audit-log.ts";
import type { Db, Executor } from "../store/db.ts";
import type { BufferedGroup } from "./aggregation-windows.ts";
import { webhookDeliveryRepository } from "./webhook-delivery-repository.ts";
import { webhookEndpointRepository } from "./webhook-endpoint-repository.ts";
import type { DueMessage } from "./webhook-messages.ts";
import { newMessageId, webhookPayload } from "./webhook-payload.ts";

/** At most this many events in one aggregated message; a larger backlog goes out in several. */
export const MAX_EVENTS_PER_MESSAGE = 500;
/** Delivered and dead messages (and their attempts) are kept this long for the log and replays. */
export const KEEP_SETTLED_MS = 30 * 24 * 3_600_000;

/** Puts one message (a direct event or a window's batch) at the end of an endpoint's queue. */
export async function enqueueMessage(
  db: Executor,
  o: {
    endpointId: string;
    operatorId: string;
    type: WebhookMessageType;
    events: WebhookMessagePayload["data"]["events"];
    now: Date;
  },
): Promise<string> {
  const id = newMessageId();
  await webhookDeliveryRepository(db).insertMessage({
    id,
    endpointId: o.endpointId,
    operatorId: o.operatorId,
    type: o.type,
    payload: webhookPayload({ id, type: o.type, createdAt: o.now, events: o.events }),
    eventCount: o.events.length,
    at: o.now.toISOString(),
  });
  return id;
}

/** How an attempt ended, as the worker settles it. */
export type Settlement =
  | { kind: "delivered" }
  | { kind: "retry"; at: Date; error: string }
  | { kind: "dead"; error: string }
  /** The receiver answered 410 Gone: the endpoint is disabled, the message waits for it. */
  | { kind: "gone"; error: string };

/** Another replica flushed the same window first; this transaction is rolled back. */
class FlushConflict extends Error {}

/**
 * The durable queue of webhook messages. Every write that hands out work is a compare-and-set, so several
 * replicas can run the worker against one store: a window is flushed once, and a message is attempted by
 * one of them at a time (claimed with a lease on `next_attempt_at`).
 */
export function webhookQueue(db: Db) {
  const queue = webhookDeliveryRepository(db);

  return {
    /** Operators and types with buffered events, by the time the oldest was buffered. */
    bufferedGroups: (): Promise<BufferedGroup[]> => queue.bufferedGroups(),

    /** Forgets settled messages queued more than KEEP_SETTLED_MS ago, with their attempts. */
    async prune(now: Date): Promise<number> {
      const cutoff = new Date(now.getTime() - KEEP_SETTLED_MS).toISOString();
      return await db
        .transaction()
        .execute((trx) => webhookDeliveryRepository(trx).deleteSettledBefore(cutoff));
    },

    /**
     * Turns the buffered events of one operator and type into one message per enabled aggregated endpoint
     * subscribed to the type. Returns the messages made (0 when another replica took the events first).
     */
    async flush(g: BufferedGroup, now: Date): Promise<number> {
      try {
        return await db.transaction().execute(async (trx) => {
          const tx = webhookDeliveryRepository(trx);
          const buffered = await tx.oldestBuffered(g.operatorId, g.type, MAX_EVENTS_PER_MESSAGE);
          if (buffered.length === 0) return 0;
          const taken = await tx.unbuffer(buffered.map((b) => b.id));
          if (taken !== buffered.length) throw new FlushConflict();
          const endpoints = await webhookEndpointRepository(trx).subscribed(
            g.operatorId,
            g.type,
            "aggregated",
          );
          const events = buffered.map((b) => b.event);
          for (const ep of endpoints)
            await enqueueMessage(trx, {
              endpointId: ep.id,
              operatorId: g.operatorId,
              type: g.type,
              events,
              now,
            });
          return endpoints.length;
        });
      } catch (err) {
        // A replica flushing the same window at once: it made the messages, or the next tick will.
        const code = (err as { code?: unknown }).code;
        if (err instanceof FlushConflict || code === "40P01" || code === "40001") return 0;
        throw err;
      }
    },

    /**
     * The oldest pending message of each enabled endpoint, when it is due (per-endpoint order: nothing
     * behind a head is attempted before the head is delivered or dead), oldest first.
     */
    dueHeads: (now: Date, o: { limit: number; endpointId?: string }): Promise<DueMessage[]> =>
      queue.dueHeads(now, o),

    /**
     * Takes a due message for one attempt: counts the attempt and moves `next_attempt_at` to the lease's
     * end, on condition that nobody changed it since it was read. False when another replica was first.
     * A worker that dies mid-attempt leaves the message to be retried when the lease runs out.
     */
    claim: (m: DueMessage, leaseUntil: Date): Promise<boolean> => queue.claim(m, leaseUntil),

    /**
     * Logs an attempt and settles its message, if the claim still holds (a worker whose lease ran out
     * while it waited only adds to the log; the replica that took over settles).
     */
    async settle(
      m: DueMessage,
      attempt: {
        leaseUntil: Date;
        at: Date;
        statusCode: number | null;
        error: string | null;
        durationMs: number;
      },
      outcome: Settlement,
      now: Date,
    ): Promise<void> {
      const ts = now.toISOString();
      const lease = attempt.leaseUntil;
      await db.transaction().execute(async (trx) => {
        const tx = webhookDeliveryRepository(trx);
        await tx.logAttempt({
          messageId: m.id,
          endpointId: m.endpointId,
          attempt: m.attempts + 1,
          at: attempt.at.toISOString(),
          statusCode: attempt.statusCode,
          error: attempt.error,
          durationMs: Math.max(0, Math.round(attempt.durationMs)),
        });
        switch (outcome.kind) {
          case "delivered":
            await tx.markDelivered(m.id, lease, ts);
            return;
          case "retry":
            await tx.retryAt(m.id, lease, outcome.at.toISOString(), outcome.error);
            return;
          case "dead":
            await tx.markDead(m.id, lease, ts, outcome.error);
            return;
          case "gone":
            if (await tx.retryAt(m.id, lease, ts, outcome.error)) await endpointGone(trx, m.endpointId, now);
            return;
        }
      });
    },
  };
}

export type WebhookQueue = ReturnType<typeof webhookQueue>;

/** Who disables an endpoint that answered 410 Gone, as the audit log names it. */
export const DELIVERY_ACTOR = { kind: "system", id: "webhook-delivery" } as const;

/**
 * A receiver answered 410 Gone: its endpoint is disabled, and the operator is told through the audit log
 * (the console's Audit view, every role of the operator reads it), in the same transaction, so the entry and
 * the disabled endpoint never disagree. Only the attempt still holding its claim gets here: one entry.
 */
async function endpointGone(trx: Executor, endpointId: string, now: Date): Promise<void> {
  const ts = now.toISOString();
  const endpoints = webhookEndpointRepository(trx);
  const endpoint = await endpoints.find(endpointId);
  await endpoints.disable(endpointId, `answered 410 Gone at ${ts}`, ts);
  if (!endpoint?.enabled) return;
  await recordAudit(
    trx,
    { actor: DELIVERY_ACTOR },
    {
      operatorId: endpoint.operatorId,
      action: "webhook.disable",
      subject: { type: "webhook_endpoint", id: endpointId },
      reason: `the receiver at ${endpoint.url} answered 410 Gone; declare the endpoint again to enable it`,
      changes: { enabled: { from: true, to: false } },
    },
    now,
  );
}
