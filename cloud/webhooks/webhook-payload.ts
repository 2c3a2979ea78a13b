import { v7 as uuidv7 } from "uuid";
import type {
  WebhookEvent,
  WebhookMessagePayload,
  WebhookMessageType,
  WebhookType,
} from "../../shared/api/webhook.ts";

/** Prefixed ids in the Standard Webhooks style; UUIDv7 inside, so they sort by creation. */
const prefixedId = (prefix: string) => `${prefix}_${uuidv7().replaceAll("-", "")}`;
export const newMessageId = () => prefixedId("msg");
export const newEventId = () => prefixedId("evt");

/** A site event as the cloud reports it (cloud/webhooks/site-events.ts). */
export type SiteEvent = {
  operatorId: string;
  type: WebhookType;
  locationId?: string | null;
  deviceId?: string | null;
  /** Type-specific details, sent as the event's `details`. */
  data: object;
  /** When it happened. */
  at: Date;
};

export function webhookEvent(e: SiteEvent, id: string = newEventId()): WebhookEvent {
  return {
    id,
    type: e.type,
    occurred_at: e.at.toISOString(),
    location_id: e.locationId ?? null,
    device_id: e.deviceId ?? null,
    details: { ...e.data },
  };
}

/** The body of one message: the events of a window (or the one direct event), oldest first. */
export function webhookPayload(o: {
  id: string;
  type: WebhookMessageType;
  createdAt: Date;
  events: readonly WebhookMessagePayload["data"]["events"][number][];
}): WebhookMessagePayload {
  const events = [...o.events].sort(
    (a, b) => a.occurred_at.localeCompare(b.occurred_at) || a.id.localeCompare(b.id),
  );
  return { id: o.id, type: o.type, created_at: o.createdAt.toISOString(), data: { events } };
}
