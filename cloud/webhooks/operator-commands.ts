import type { Command } from "commander";
import { Uuid } from "../../shared/api/uuid.ts";
import type { WebhookType } from "../../shared/api/webhook.ts";
import { CliExit, EXIT } from "../../shared/cli/exit-codes.ts";
import { systemClock } from "../../shared/node/system-clock.ts";
import type { Clock } from "../../shared/time/clock.ts";
import type { Db } from "../store/db.ts";
import { fromJson } from "../store/json-column.ts";
import type { WebhookDelivery, WebhookMessageStatus } from "../store/tables/webhook-tables.ts";

type WithStore = <T>(fn: (db: Db) => Promise<T>) => Promise<T>;

export type EndpointSummary = {
  id: string;
  operatorId: string;
  url: string;
  delivery: WebhookDelivery;
  types: WebhookType[];
  enabled: boolean;
  disabledReason: string | null;
  /** Signing secrets in use (2 during a rotation). */
  secrets: number;
  queue: Record<WebhookMessageStatus, number>;
  /** When the oldest pending message entered the queue. */
  oldestPendingAt: string | null;
};

/** Every webhook endpoint with its queue: pending, delivered and dead messages. */
export async function listWebhookEndpoints(db: Db): Promise<EndpointSummary[]> {
  const endpoints = await db
    .selectFrom("webhook_endpoints")
    .selectAll()
    .orderBy("operator_id")
    .orderBy("id")
    .execute();
  const counts = await db
    .selectFrom("webhook_messages")
    .select([
      "endpoint_id",
      "status",
      (eb) => eb.fn.countAll().as("n"),
      (eb) => eb.fn.min("queued_at").as("oldest"),
    ])
    .groupBy(["endpoint_id", "status"])
    .execute();
  return endpoints.map((e) => {
    const queue: Record<WebhookMessageStatus, number> = { pending: 0, delivered: 0, dead: 0 };
    let oldestPendingAt: string | null = null;
    for (const c of counts.filter((x) => x.endpoint_id === e.id)) {
      queue[c.status] = Number(c.n);
      if (c.status === "pending") oldestPendingAt = c.oldest === null ? null : String(c.oldest);
    }
    return {
      id: e.id,
      operatorId: e.operator_id,
      url: e.url,
      delivery: e.delivery,
      types: fromJson(e.types),
      enabled: e.enabled === 1,
      disabledReason: e.disabled_reason,
      secrets: fromJson(e.secrets).length,
      queue,
      oldestPendingAt,
    };
  });
}

/** Events buffered for aggregation, per operator and type (not yet messages). */
export async function bufferedEvents(
  db: Db,
): Promise<{ operatorId: string; type: WebhookType; n: number }[]> {
  const rows = await db
    .selectFrom("webhook_pending_events")
    .select(["operator_id", "type", (eb) => eb.fn.countAll().as("n")])
    .groupBy(["operator_id", "type"])
    .orderBy("operator_id")
    .orderBy("type")
    .execute();
  return rows.map((r) => ({ operatorId: r.operator_id, type: r.type, n: Number(r.n) }));
}

export type LoggedMessage = {
  id: string;
  endpointId: string;
  type: WebhookType;
  events: number;
  status: WebhookMessageStatus;
  attempts: number;
  createdAt: string;
  queuedAt: string;
  nextAttemptAt: string | null;
  deliveredAt: string | null;
  deadAt: string | null;
  lastError: string | null;
  log: { attempt: number; at: string; statusCode: number | null; error: string | null; durationMs: number }[];
};

/** The most recent messages (newest first), of one endpoint or all, with their attempts. */
export async function webhookLog(
  db: Db,
  o: { endpointId?: string; limit: number },
): Promise<LoggedMessage[]> {
  let q = db.selectFrom("webhook_messages").selectAll();
  if (o.endpointId) q = q.where("endpoint_id", "=", o.endpointId);
  const messages = await q.orderBy("queued_at", "desc").orderBy("id", "desc").limit(o.limit).execute();
  if (messages.length === 0) return [];
  const attempts = await db
    .selectFrom("webhook_attempts")
    .selectAll()
    .where(
      "message_id",
      "in",
      messages.map((m) => m.id),
    )
    .orderBy("at")
    .orderBy("attempt")
    .execute();
  return messages.map((m) => ({
    id: m.id,
    endpointId: m.endpoint_id,
    type: m.type,
    events: m.event_count,
    status: m.status,
    attempts: m.attempts,
    createdAt: m.created_at,
    queuedAt: m.queued_at,
    nextAttemptAt: m.status === "pending" ? m.next_attempt_at : null,
    deliveredAt: m.delivered_at,
    deadAt: m.dead_at,
    lastError: m.last_error,
    log: attempts
      .filter((a) => a.message_id === m.id)
      .map((a) => ({
        attempt: a.attempt,
        at: a.at,
        statusCode: a.status_code,
        error: a.error,
        durationMs: a.duration_ms,
      })),
  }));
}

/**
 * Puts a delivered or dead message back in its endpoint's queue: same id and body (receivers deduplicate
 * on webhook-id), attempts counted from 0, a fresh day to live, and its place at the end of the queue.
 */
export async function replayWebhookMessage(
  db: Db,
  messageId: string,
  now: Date,
): Promise<{ id: string; endpointId: string; from: WebhookMessageStatus; endpointEnabled: boolean }> {
  const m = await db
    .selectFrom("webhook_messages as m")
    .innerJoin("webhook_endpoints as e", "e.id", "m.endpoint_id")
    .select(["m.id", "m.status", "m.endpoint_id", "e.enabled"])
    .where("m.id", "=", messageId)
    .executeTakeFirst();
  if (!m) throw new CliExit(EXIT.notFound, `webhook message ${messageId} not found`);
  if (m.status === "pending")
    throw new CliExit(
      EXIT.checkFailed,
      `webhook message ${messageId} is still pending: it will be sent anyway`,
    );
  const ts = now.toISOString();
  const r = await db
    .updateTable("webhook_messages")
    .set({
      status: "pending",
      attempts: 0,
      next_attempt_at: ts,
      queued_at: ts,
      delivered_at: null,
      dead_at: null,
      last_error: null,
    })
    .where("id", "=", m.id)
    .where("status", "=", m.status)
    .executeTakeFirst();
  if (Number(r.numUpdatedRows) !== 1)
    throw new CliExit(EXIT.checkFailed, `webhook message ${messageId} changed meanwhile; look again`);
  return { id: m.id, endpointId: m.endpoint_id, from: m.status, endpointEnabled: m.enabled === 1 };
}

const countOf = (q: Record<WebhookMessageStatus, number>) =>
  `${q.pending} pending, ${q.delivered} delivered, ${q.dead} dead`;

/** `webhooks`, `webhook-log` and `webhook-replay` of `npm run operator`. */
export function registerWebhookCommands(program: Command, withStore: WithStore, clock: Clock = systemClock) {
  program
    .command("webhooks")
    .description("List the webhook endpoints of every operator with their queues")
    .action(async () => {
      const { endpoints, buffered } = await withStore(async (db) => ({
        endpoints: await listWebhookEndpoints(db),
        buffered: await bufferedEvents(db),
      }));
      if (endpoints.length === 0) console.log("no webhook endpoints (declare them in the site manifest)");
      for (const e of endpoints) {
        const state = e.enabled ? "enabled" : `disabled (${e.disabledReason ?? "no reason given"})`;
        console.log(`${e.id}  ${e.url}`);
        console.log(`  operator ${e.operatorId}; ${e.delivery}; ${e.types.join(", ")}; ${state}`);
        console.log(
          `  ${countOf(e.queue)}${e.oldestPendingAt ? `; oldest pending since ${e.oldestPendingAt}` : ""}` +
            `${e.secrets > 1 ? "; signed with 2 secrets (rotation)" : ""}`,
        );
      }
      for (const b of buffered)
        console.log(`buffered for aggregation: operator ${b.operatorId} ${b.type}: ${b.n} event(s)`);
    });
  program
    .command("webhook-log")
    .description("Show recent webhook messages (newest first) and each delivery attempt")
    .option("--endpoint <uuid>", "only this endpoint's messages")
    .option("--limit <n>", "how many messages", "20")
    .action(async (opts: { endpoint?: string; limit: string }) => {
      const limit = Number(opts.limit);
      if (!Number.isInteger(limit) || limit < 1 || limit > 1000)
        throw new CliExit(EXIT.usage, "--limit: a whole number from 1 to 1000");
      let endpointId: string | undefined;
      if (opts.endpoint !== undefined) {
        const parsed = Uuid.safeParse(opts.endpoint);
        if (!parsed.success) throw new CliExit(EXIT.usage, "--endpoint: must be a UUID");
        endpointId = parsed.data;
      }
      const messages = await withStore((db) => webhookLog(db, { endpointId, limit }));
      if (messages.length === 0) console.log("no webhook messages");
      for (const m of messages) {
        const when =
          m.status === "delivered"
            ? `delivered ${m.deliveredAt}`
            : m.status === "dead"
              ? `dead ${m.deadAt}`
              : `next attempt ${m.nextAttemptAt}`;
        console.log(
          `${m.id}  ${m.type} (${m.events} event${m.events === 1 ? "" : "s"})  ${m.status}  ${when}  endpoint ${m.endpointId}`,
        );
        for (const a of m.log)
          console.log(
            `  #${a.attempt} ${a.at}  ${a.statusCode ?? "-"}  ${a.error ?? "ok"}  ${a.durationMs} ms`,
          );
      }
    });
  program
    .command("webhook-replay")
    .description("Send a delivered or dead webhook message again (same webhook-id; attempts start over)")
    .argument("<message_id>", "the message's id (msg_…, as webhook-log shows it)")
    .action(async (messageId: string) => {
      const r = await withStore((db) => replayWebhookMessage(db, messageId, clock.now()));
      console.log(
        `webhook message ${r.id} (${r.from}) queued again for endpoint ${r.endpointId}` +
          (r.endpointEnabled
            ? ""
            : "; the endpoint is disabled: it is sent once the manifest declares it again"),
      );
    });
}
