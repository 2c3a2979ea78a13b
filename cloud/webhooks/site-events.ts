import type { Executor } from "../store/db.ts";
import { webhookDeliveryRepository } from "./webhook-delivery-repository.ts";
import { webhookEndpointRepository } from "./webhook-endpoint-repository.ts";
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
  const subscribed = await webhookEndpointRepository(db).subscribed(e.operatorId, e.type);
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
    await webhookDeliveryRepository(db).bufferEvent(e.operatorId, event, now.toISOString());
}
