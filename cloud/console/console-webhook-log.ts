import type {
  ConsoleWebhookAttempt,
  ConsoleWebhookDelivery,
  ConsoleWebhookEndpoint,
} from "../../shared/api/console-webhooks.ts";
import { AppError } from "../../shared/api/errors.ts";
import type { Executor } from "../store/db.ts";
import { fromJson } from "../store/json-column.ts";
import type { WebhookAttemptsTable } from "../store/tables/webhook-tables.ts";
import type { WebhookEndpoint } from "../webhooks/webhook-endpoint-repository.ts";

/**
 * The reads behind the console's webhooks views: endpoints with their latest attempt, and an endpoint's
 * deliveries newest first (by when each was made, so a replay keeps its place) with every attempt.
 */

type Cursor = { c: string; i: string };

const encodeCursor = (c: Cursor) => Buffer.from(JSON.stringify(c)).toString("base64url");

function decodeCursor(token: string): Cursor {
  try {
    const c = JSON.parse(Buffer.from(token, "base64url").toString("utf8")) as Partial<Cursor>;
    if (typeof c.c === "string" && typeof c.i === "string") return { c: c.c, i: c.i };
  } catch {
    // Falls through to the refusal.
  }
  throw new AppError("ERRORS.INVALID_PAGINATION_TOKEN", "The cursor is not one this list gave out");
}

const toAttempt = (a: WebhookAttemptsTable): ConsoleWebhookAttempt => ({
  attempt: a.attempt,
  at: a.at,
  status_code: a.status_code,
  error: a.error,
  duration_ms: a.duration_ms,
});

/** The latest attempt to each of these endpoints. */
async function lastAttempts(db: Executor, endpointIds: string[]) {
  const out = new Map<string, ConsoleWebhookEndpoint["last_attempt"]>();
  for (const id of endpointIds) {
    const a = await db
      .selectFrom("webhook_attempts")
      .selectAll()
      .where("endpoint_id", "=", id)
      .orderBy("at", "desc")
      .orderBy("attempt", "desc")
      .limit(1)
      .executeTakeFirst();
    out.set(id, a ? { ...toAttempt(a), message_id: a.message_id } : null);
  }
  return out;
}

/** Endpoints as the console shows them, each with its latest attempt. */
export async function presentEndpoints(
  db: Executor,
  endpoints: WebhookEndpoint[],
): Promise<ConsoleWebhookEndpoint[]> {
  const last = await lastAttempts(
    db,
    endpoints.map((e) => e.id),
  );
  return endpoints.map((e) => ({
    id: e.id,
    operator_id: e.operatorId,
    url: e.url,
    types: e.types,
    delivery: e.delivery,
    enabled: e.enabled,
    disabled_reason: e.disabledReason,
    last_attempt: last.get(e.id) ?? null,
  }));
}

/** A page of an endpoint's deliveries, newest first, with their attempts. */
export async function deliveryPage(
  db: Executor,
  endpointId: string,
  o: { limit: number; cursor?: string },
): Promise<{ deliveries: ConsoleWebhookDelivery[]; next_cursor: string | null }> {
  let q = db.selectFrom("webhook_messages").selectAll().where("endpoint_id", "=", endpointId);
  if (o.cursor) {
    const after = decodeCursor(o.cursor);
    q = q.where((eb) =>
      eb.or([
        eb("created_at", "<", after.c),
        eb.and([eb("created_at", "=", after.c), eb("id", "<", after.i)]),
      ]),
    );
  }
  const rows = await q
    .orderBy("created_at", "desc")
    .orderBy("id", "desc")
    .limit(o.limit + 1)
    .execute();
  const page = rows.slice(0, o.limit);
  const ids = page.map((m) => m.id);
  const attempts =
    ids.length === 0
      ? []
      : await db
          .selectFrom("webhook_attempts")
          .selectAll()
          .where("message_id", "in", ids)
          .orderBy("at")
          .orderBy("attempt")
          .execute();
  const last = page.at(-1);
  return {
    deliveries: page.map((m) => ({
      id: m.id,
      type: m.type,
      event_ids: fromJson(m.payload).data.events.map((e) => e.id),
      status: m.status,
      created_at: m.created_at,
      queued_at: m.queued_at,
      next_attempt_at: m.status === "pending" ? m.next_attempt_at : null,
      delivered_at: m.delivered_at,
      dead_at: m.dead_at,
      last_error: m.last_error,
      attempts: attempts.filter((a) => a.message_id === m.id).map(toAttempt),
    })),
    next_cursor: rows.length > o.limit && last ? encodeCursor({ c: last.created_at, i: last.id }) : null,
  };
}
