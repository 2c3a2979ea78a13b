import { randomUUID } from "node:crypto";
import type { ExpressionBuilder } from "kysely";
import type { WebhookEvent, WebhookType } from "../../shared/api/webhook.ts";
import type { Executor } from "../store/db.ts";
import { fromJson, toJson } from "../store/json-column.ts";
import type { Database } from "../store/schema.ts";
import type { WebhookMessageStatus } from "../store/tables/webhook-tables.ts";
import type { BufferedGroup } from "./aggregation-windows.ts";
import {
  type AttemptRecord,
  type DueMessage,
  MESSAGE_COLUMNS,
  type MessageRecord,
  type NewMessage,
  toMessage,
} from "./webhook-messages.ts";

/**
 * The delivery queue: events buffered for aggregation, messages and their attempts. Only this repository
 * reads or writes their tables. The writes that settle a message hold only while it is still `pending`
 * under the lease its claim took (`leaseUntil`), and say whether they did.
 */
export function webhookDeliveryRepository(db: Executor) {
  const claimed = (id: string, leaseUntil: Date) =>
    db
      .updateTable("webhook_messages")
      .where("id", "=", id)
      .where("status", "=", "pending")
      .where("next_attempt_at", "=", leaseUntil.toISOString());
  const updated = (r: { numUpdatedRows: bigint }) => Number(r.numUpdatedRows) === 1;

  return {
    async insertMessage(m: NewMessage): Promise<void> {
      await db
        .insertInto("webhook_messages")
        .values({
          id: m.id,
          endpoint_id: m.endpointId,
          operator_id: m.operatorId,
          type: m.type,
          payload: toJson(m.payload),
          event_count: m.eventCount,
          status: "pending",
          attempts: 0,
          next_attempt_at: m.at,
          created_at: m.at,
          queued_at: m.at,
          delivered_at: null,
          dead_at: null,
          last_error: null,
        })
        .execute();
    },

    /** Keeps an event of an operator until its aggregation window closes. */
    async bufferEvent(operatorId: string, event: WebhookEvent, at: string): Promise<void> {
      await db
        .insertInto("webhook_pending_events")
        .values({
          id: event.id,
          operator_id: operatorId,
          type: event.type,
          event: toJson(event),
          created_at: at,
        })
        .execute();
    },

    /** Operators and types with buffered events, with the time the oldest was buffered. */
    async bufferedGroups(): Promise<BufferedGroup[]> {
      const rows = await db
        .selectFrom("webhook_pending_events")
        .select(["operator_id", "type", (eb) => eb.fn.min("created_at").as("first_at")])
        .groupBy(["operator_id", "type"])
        .execute();
      return rows.map((r) => ({ operatorId: r.operator_id, type: r.type, firstAt: String(r.first_at) }));
    },

    /** How many events are buffered, per operator and type (in that order). */
    async bufferedCounts(): Promise<{ operatorId: string; type: WebhookType; n: number }[]> {
      const rows = await db
        .selectFrom("webhook_pending_events")
        .select(["operator_id", "type", (eb) => eb.fn.countAll().as("n")])
        .groupBy(["operator_id", "type"])
        .orderBy("operator_id")
        .orderBy("type")
        .execute();
      return rows.map((r) => ({ operatorId: r.operator_id, type: r.type, n: Number(r.n) }));
    },

    /** The first `limit` buffered events of an operator and type, in the order they were buffered. */
    async oldestBuffered(
      operatorId: string,
      type: WebhookType,
      limit: number,
    ): Promise<{ id: string; event: WebhookEvent }[]> {
      const rows = await db
        .selectFrom("webhook_pending_events")
        .select(["id", "event"])
        .where("operator_id", "=", operatorId)
        .where("type", "=", type)
        .orderBy("created_at")
        .orderBy("id")
        .limit(limit)
        .execute();
      return rows.map((r) => ({ id: r.id, event: fromJson(r.event) }));
    },

    /** Forgets buffered events; returns how many were still there. */
    async unbuffer(ids: readonly string[]): Promise<number> {
      if (ids.length === 0) return 0;
      const r = await db.deleteFrom("webhook_pending_events").where("id", "in", ids).executeTakeFirst();
      return Number(r.numDeletedRows);
    },

    /** Deletes settled messages queued before `cutoff`, with their attempts; returns the messages deleted. */
    async deleteSettledBefore(cutoff: string): Promise<number> {
      const old = (eb: ExpressionBuilder<Database, "webhook_messages">) =>
        eb.and([eb("status", "!=", "pending"), eb("queued_at", "<", cutoff)]);
      await db
        .deleteFrom("webhook_attempts")
        .where("message_id", "in", db.selectFrom("webhook_messages").select("id").where(old))
        .execute();
      const r = await db.deleteFrom("webhook_messages").where(old).executeTakeFirst();
      return Number(r.numDeletedRows);
    },

    /**
     * The oldest pending message of each enabled endpoint (of one endpoint when given), when it is due at
     * `now`, oldest first. Nothing behind a head is returned before the head is delivered or dead.
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
     * Counts an attempt of a due message and moves `next_attempt_at` to `leaseUntil`, on condition that
     * nobody changed it since it was read. False when someone did.
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
      return updated(r);
    },

    async logAttempt(a: AttemptRecord): Promise<void> {
      await db
        .insertInto("webhook_attempts")
        .values({
          id: randomUUID(),
          message_id: a.messageId,
          endpoint_id: a.endpointId,
          attempt: a.attempt,
          at: a.at,
          status_code: a.statusCode,
          error: a.error,
          duration_ms: a.durationMs,
        })
        .execute();
    },

    async markDelivered(id: string, leaseUntil: Date, at: string): Promise<boolean> {
      return updated(
        await claimed(id, leaseUntil)
          .set({ status: "delivered", delivered_at: at, last_error: null })
          .executeTakeFirst(),
      );
    },

    /** Leaves the message pending, for another attempt at `at`. */
    async retryAt(id: string, leaseUntil: Date, at: string, error: string): Promise<boolean> {
      return updated(
        await claimed(id, leaseUntil).set({ next_attempt_at: at, last_error: error }).executeTakeFirst(),
      );
    },

    async markDead(id: string, leaseUntil: Date, at: string, error: string): Promise<boolean> {
      return updated(
        await claimed(id, leaseUntil)
          .set({ status: "dead", dead_at: at, last_error: error })
          .executeTakeFirst(),
      );
    },

    /** Messages per endpoint and status, with when the oldest of them was queued. */
    async queueCounts(): Promise<
      { endpointId: string; status: WebhookMessageStatus; n: number; oldestQueuedAt: string | null }[]
    > {
      const rows = await db
        .selectFrom("webhook_messages")
        .select([
          "endpoint_id",
          "status",
          (eb) => eb.fn.countAll().as("n"),
          (eb) => eb.fn.min("queued_at").as("oldest"),
        ])
        .groupBy(["endpoint_id", "status"])
        .execute();
      return rows.map((r) => ({
        endpointId: r.endpoint_id,
        status: r.status,
        n: Number(r.n),
        oldestQueuedAt: r.oldest === null ? null : String(r.oldest),
      }));
    },

    /** The most recently queued messages, newest first, of one endpoint or all. */
    async recent(o: { endpointId?: string; limit: number }): Promise<MessageRecord[]> {
      let q = db.selectFrom("webhook_messages").select(MESSAGE_COLUMNS);
      if (o.endpointId) q = q.where("endpoint_id", "=", o.endpointId);
      const rows = await q.orderBy("queued_at", "desc").orderBy("id", "desc").limit(o.limit).execute();
      return rows.map(toMessage);
    },

    /** The attempts of these messages, in the order they were made. */
    async attemptsOf(messageIds: readonly string[]): Promise<AttemptRecord[]> {
      if (messageIds.length === 0) return [];
      const rows = await db
        .selectFrom("webhook_attempts")
        .selectAll()
        .where("message_id", "in", messageIds)
        .orderBy("at")
        .orderBy("attempt")
        .execute();
      return rows.map((a) => ({
        messageId: a.message_id,
        endpointId: a.endpoint_id,
        attempt: a.attempt,
        at: a.at,
        statusCode: a.status_code,
        error: a.error,
        durationMs: a.duration_ms,
      }));
    },

    /** A message with whether its endpoint is enabled. */
    async findWithEndpoint(
      id: string,
    ): Promise<{ message: MessageRecord; endpointEnabled: boolean } | undefined> {
      const row = await db
        .selectFrom("webhook_messages as m")
        .innerJoin("webhook_endpoints as e", "e.id", "m.endpoint_id")
        .select(MESSAGE_COLUMNS.map((c) => `m.${c}` as const))
        .select("e.enabled")
        .where("m.id", "=", id)
        .executeTakeFirst();
      if (!row) return undefined;
      const { enabled, ...message } = row;
      return { message: toMessage(message), endpointEnabled: enabled === 1 };
    },

    /**
     * Puts a settled message back at the end of its queue (`at`), attempts from 0, if it is still `from`.
     * False when it changed meanwhile.
     */
    async requeue(id: string, from: WebhookMessageStatus, at: string): Promise<boolean> {
      const r = await db
        .updateTable("webhook_messages")
        .set({
          status: "pending",
          attempts: 0,
          next_attempt_at: at,
          queued_at: at,
          delivered_at: null,
          dead_at: null,
          last_error: null,
        })
        .where("id", "=", id)
        .where("status", "=", from)
        .executeTakeFirst();
      return updated(r);
    },
  };
}

export type WebhookDeliveryRepository = ReturnType<typeof webhookDeliveryRepository>;
