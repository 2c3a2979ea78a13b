import type { Command } from "commander";
import { Uuid } from "../../shared/api/uuid.ts";
import type { WebhookMessageType, WebhookType } from "../../shared/api/webhook.ts";
import { CliExit, EXIT } from "../../shared/cli/exit-codes.ts";
import { systemClock } from "../../shared/node/system-clock.ts";
import type { Clock } from "../../shared/time/clock.ts";
import type { Db } from "../store/db.ts";
import type { WebhookDelivery, WebhookMessageStatus } from "../store/tables/webhook-tables.ts";
import { webhookDeliveryRepository } from "./webhook-delivery-repository.ts";
import { webhookEndpointRepository } from "./webhook-endpoint-repository.ts";

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
  const endpoints = await webhookEndpointRepository(db).all();
  const counts = await webhookDeliveryRepository(db).queueCounts();
  return endpoints.map((e) => {
    const queue: Record<WebhookMessageStatus, number> = { pending: 0, delivered: 0, dead: 0 };
    let oldestPendingAt: string | null = null;
    for (const c of counts.filter((x) => x.endpointId === e.id)) {
      queue[c.status] = c.n;
      if (c.status === "pending") oldestPendingAt = c.oldestQueuedAt;
    }
    return {
      id: e.id,
      operatorId: e.operatorId,
      url: e.url,
      delivery: e.delivery,
      types: e.types,
      enabled: e.enabled,
      disabledReason: e.disabledReason,
      secrets: e.secrets.length,
      queue,
      oldestPendingAt,
    };
  });
}

/** Events buffered for aggregation, per operator and type (not yet messages). */
export function bufferedEvents(db: Db): Promise<{ operatorId: string; type: WebhookType; n: number }[]> {
  return webhookDeliveryRepository(db).bufferedCounts();
}

export type LoggedMessage = {
  id: string;
  endpointId: string;
  type: WebhookMessageType;
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
  const queue = webhookDeliveryRepository(db);
  const messages = await queue.recent(o);
  const attempts = await queue.attemptsOf(messages.map((m) => m.id));
  return messages.map((m) => ({
    id: m.id,
    endpointId: m.endpointId,
    type: m.type,
    events: m.eventCount,
    status: m.status,
    attempts: m.attempts,
    createdAt: m.createdAt,
    queuedAt: m.queuedAt,
    nextAttemptAt: m.status === "pending" ? m.nextAttemptAt : null,
    deliveredAt: m.deliveredAt,
    deadAt: m.deadAt,
    lastError: m.lastError,
    log: attempts
      .filter((a) => a.messageId === m.id)
      .map((a) => ({
        attempt: a.attempt,
        at: a.at,
        statusCode: a.statusCode,
        error: a.error,
        durationMs: a.durationMs,
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
  const queue = webhookDeliveryRepository(db);
  const found = await queue.findWithEndpoint(messageId);
  if (!found) throw new CliExit(EXIT.notFound, `webhook message ${messageId} not found`);
  const { message: m, endpointEnabled } = found;
  if (m.status === "pending")
    throw new CliExit(
      EXIT.checkFailed,
      `webhook message ${messageId} is still pending: it will be sent anyway`,
    );
  if (!(await queue.requeue(m.id, m.status, now.toISOString())))
    throw new CliExit(EXIT.checkFailed, `webhook message ${messageId} changed meanwhile; look again`);
  return { id: m.id, endpointId: m.endpointId, from: m.status, endpointEnabled };
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
