import type { Executor } from "../store/db.ts";
import { fromJson, toJson } from "../store/json-column.ts";
import { newEventId, type SiteEvent, webhookEvent } from "./webhook-payload.ts";
import { enqueueMessage } from "./webhook-queue.ts";

export type { SiteEvent } from "./webhook-payload.ts";

/**
 * The entry point of webhooks: a site event of an operator (spec: Outbound notifications). For each of
 * the operator's enabled endpoints subscribed to the type, a direct endpoint gets a message at once and
 * aggregated ones get the event buffered until its window closes (aggregation-windows.ts); the delivery
 * worker sends them. Only writes rows, so it can run inside the caller's transaction and the event is
 * kept exactly when the caller's change is. `now` is the cloud's clock (the queue's order and a message's
 * day to live); it defaults to `e.at`.
 */
export async function recordSiteEvent(db: Executor, e: SiteEvent, now: Date = e.at): Promise<void> {
  const endpoints = await db
    .selectFrom("webhook_endpoints")
    .select(["id", "types", "delivery"])
    .where("operator_id", "=", e.operatorId)
    .where("enabled", "=", 1)
    .orderBy("id")
    .execute();
  const subscribed = endpoints.filter((ep) => fromJson(ep.types).includes(e.type));
  if (subscribed.length === 0) return;
  const event = webhookEvent(e, newEventId());
  for (const ep of subscribed)
    if (ep.delivery === "direct")
      await enqueueMessage(db, {
        endpointId: ep.id,
        operatorId: e.operatorId,
        type: e.type,
        events: [event],
        now,
      });
  if (subscribed.some((ep) => ep.delivery === "aggregated"))
    await db
      .insertInto("webhook_pending_events")
      .values({
        id: event.id,
        operator_id: e.operatorId,
        type: e.type,
        event: toJson(event),
        created_at: now.toISOString(),
      })
      .execute();
}
