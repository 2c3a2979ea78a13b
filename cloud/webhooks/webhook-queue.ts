import { randomUUID } from "node:crypto";
import type { ExpressionBuilder } from "kysely";
import type { WebhookEvent, WebhookType } from "../../shared/api/webhook.ts";
import type { Db, Executor } from "../store/db.ts";
import { fromJson, toJson } from "../store/json-column.ts";
import type { Database } from "../store/schema.ts";
import type { BufferedGroup } from "./aggregation-windows.ts";
import { newMessageId, webhookPayload } from "./webhook-payload.ts";

/** At most this many events in one aggregated message; a larger backlog goes out in several. */
export const MAX_EVENTS_PER_MESSAGE = 500;
/** Delivered and dead messages (and their attempts) are kept this long for the log and replays. */
export const KEEP_SETTLED_MS = 30 * 24 * 3_600_000;

/** Puts one message (a direct event or a window's batch) at the end of an endpoint's queue. */
export async function enqueueMessage(
  db: Executor,
  o: { endpointId: string; operatorId: string; type: WebhookType; events: WebhookEvent[]; now: Date },
): Promise<string> {
  const id = newMessageId();
  const ts = o.now.toISOString();
  await db
    .insertInto("webhook_messages")
    .values({
      id,
      endpoint_id: o.endpointId,
      operator_id: o.operatorId,
      type: o.type,
      payload: toJson(webhookPayload({ id, type: o.type, createdAt: o.now, events: o.events })),
      event_count: o.events.length,
      status: "pending",
      attempts: 0,
      next_attempt_at: ts,
      created_at: ts,
      queued_at: ts,
      delivered_at: null,
      dead_at: null,
      last_error: null,
    })
    .execute();
  return id;
}

/** The head of an endpoint's queue, due for an attempt, with what sending it needs. */
export type DueMessage = {
  id: string;
  endpointId: string;
  url: string;
  secrets: string[];
  allowPrivate: boolean;
  /** The body, exactly as stored. */
  payload: string;
  attempts: number;
  nextAttemptAt: string;
  queuedAt: string;
};

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
  return {
    /** Operators and types with buffered events, by the time the oldest was buffered. */
    async bufferedGroups(): Promise<BufferedGroup[]> {
      const rows = await db
        .selectFrom("webhook_pending_events")
        .select(["operator_id", "type", (eb) => eb.fn.min("created_at").as("first_at")])
        .groupBy(["operator_id", "type"])
        .execute();
      return rows.map((r) => ({ operatorId: r.operator_id, type: r.type, firstAt: String(r.first_at) }));
    },

    /** Forgets settled messages queued more than KEEP_SETTLED_MS ago, with their attempts. */
    async prune(now: Date): Promise<number> {
      const cutoff = new Date(now.getTime() - KEEP_SETTLED_MS).toISOString();
      const old = (eb: ExpressionBuilder<Database, "webhook_messages">) =>
        eb.and([eb("status", "!=", "pending"), eb("queued_at", "<", cutoff)]);
      return await db.transaction().execute(async (trx) => {
        await trx
          .deleteFrom("webhook_attempts")
          .where("message_id", "in", trx.selectFrom("webhook_messages").select("id").where(old))
          .execute();
        const r = await trx.deleteFrom("webhook_messages").where(old).executeTakeFirst();
        return Number(r.numDeletedRows);
      });
    },

    /**
     * Turns the buffered events of one operator and type into one message per enabled aggregated endpoint
     * subscribed to the type. Returns the messages made (0 when another replica took the events first).
     */
    async flush(g: BufferedGroup, now: Date): Promise<number> {
      try {
        return await db.transaction().execute(async (trx) => {
          const rows = await trx
            .selectFrom("webhook_pending_events")
            .select(["id", "event"])
            .where("operator_id", "=", g.operatorId)
            .where("type", "=", g.type)
            .orderBy("created_at")
            .orderBy("id")
            .limit(MAX_EVENTS_PER_MESSAGE)
            .execute();
          if (rows.length === 0) return 0;
          const deleted = await trx
            .deleteFrom("webhook_pending_events")
            .where(
              "id",
              "in",
              rows.map((r) => r.id),
            )
            .executeTakeFirst();
          if (Number(deleted.numDeletedRows) !== rows.length) throw new FlushConflict();
          const endpoints = await trx
            .selectFrom("webhook_endpoints")
            .select(["id", "types"])
            .where("operator_id", "=", g.operatorId)
            .where("enabled", "=", 1)
            .where("delivery", "=", "aggregated")
            .orderBy("id")
            .execute();
          const events = rows.map((r) => fromJson(r.event));
          let made = 0;
          for (const ep of endpoints.filter((e) => fromJson(e.types).includes(g.type))) {
            await enqueueMessage(trx, {
              endpointId: ep.id,
              operatorId: g.operatorId,
              type: g.type,
              events,
              now,
            });
            made++;
          }
          return made;
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
    async dueHeads(now: Date, o: { limit: number; endpointId?: string }): Promise<DueMessage[]> {
      let q = db
        .selectFrom("webhook_messages as m")
        .innerJoin("webhook_endpoints as e", "e.id", "m.endpoint_id")
        .select([
          "m.id",
          "m.endpoint_id",
          "m.payload",
          "m.attempts",
          "m.next_attempt_at",
          "m.queued_at",
          "e.url",
          "e.secrets",
          "e.allow_private",
        ])
        .where("e.enabled", "=", 1)
        .where("m.status", "=", "pending")
        .where("m.next_attempt_at", "<=", now.toISOString())
        .where(({ not, exists, selectFrom }) =>
          not(
            exists(
              selectFrom("webhook_messages as o")
                .select("o.id")
                .whereRef("o.endpoint_id", "=", "m.endpoint_id")
                .where("o.status", "=", "pending")
                .where((eb) =>
                  eb.or([
                    eb("o.queued_at", "<", eb.ref("m.queued_at")),
                    eb.and([eb("o.queued_at", "=", eb.ref("m.queued_at")), eb("o.id", "<", eb.ref("m.id"))]),
                  ]),
                ),
            ),
          ),
        );
      if (o.endpointId) q = q.where("m.endpoint_id", "=", o.endpointId);
      const rows = await q.orderBy("m.queued_at").orderBy("m.id").limit(o.limit).execute();
      return rows.map((r) => ({
        id: r.id,
        endpointId: r.endpoint_id,
        url: r.url,
        secrets: fromJson(r.secrets),
        allowPrivate: r.allow_private === 1,
        payload: r.payload,
        attempts: r.attempts,
        nextAttemptAt: r.next_attempt_at,
        queuedAt: r.queued_at,
      }));
    },

    /**
     * Takes a due message for one attempt: counts the attempt and moves `next_attempt_at` to the lease's
     * end, on condition that nobody changed it since it was read. False when another replica was first.
     * A worker that dies mid-attempt leaves the message to be retried when the lease runs out.
     */
    async claim(m: DueMessage, leaseUntil: Date): Promise<boolean> {
      const r = await db
        .updateTable("webhook_messages")
        .set({ attempts: m.attempts + 1, next_attempt_at: leaseUntil.toISOString() })
        .where("id", "=", m.id)
        .where("status", "=", "pending")
        .where("attempts", "=", m.attempts)
        .where("next_attempt_at", "=", m.nextAttemptAt)
        .executeTakeFirst();
      return Number(r.numUpdatedRows) === 1;
    },

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
      await db.transaction().execute(async (trx) => {
        await trx
          .insertInto("webhook_attempts")
          .values({
            id: randomUUID(),
            message_id: m.id,
            endpoint_id: m.endpointId,
            attempt: m.attempts + 1,
            at: attempt.at.toISOString(),
            status_code: attempt.statusCode,
            error: attempt.error,
            duration_ms: Math.max(0, Math.round(attempt.durationMs)),
          })
          .execute();
        const update = trx
          .updateTable("webhook_messages")
          .where("id", "=", m.id)
          .where("status", "=", "pending")
          .where("next_attempt_at", "=", attempt.leaseUntil.toISOString());
        switch (outcome.kind) {
          case "delivered":
            await update.set({ status: "delivered", delivered_at: ts, last_error: null }).execute();
            return;
          case "retry":
            await update
              .set({ next_attempt_at: outcome.at.toISOString(), last_error: outcome.error })
              .execute();
            return;
          case "dead":
            await update.set({ status: "dead", dead_at: ts, last_error: outcome.error }).execute();
            return;
          case "gone": {
            const held = await update
              .set({ next_attempt_at: ts, last_error: outcome.error })
              .executeTakeFirst();
            if (Number(held.numUpdatedRows) === 1)
              await trx
                .updateTable("webhook_endpoints")
                .set({ enabled: 0, disabled_reason: `answered 410 Gone at ${ts}`, updated_at: ts })
                .where("id", "=", m.endpointId)
                .execute();
            return;
          }
        }
      });
    },
  };
}

export type WebhookQueue = ReturnType<typeof webhookQueue>;
