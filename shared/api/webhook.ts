import { z } from "zod";

/** Spec (Events: Outbound notifications): the four webhook types. */
export const WEBHOOK_TYPES = ["connection", "connection_confirmed", "alarm", "status"] as const;
export type WebhookType = (typeof WEBHOOK_TYPES)[number];

/**
 * The type of a test message an operator sends to an endpoint from the console ("Send test event"): not a
 * site event, never subscribed to, delivered like any message (docs/decisions/console.md).
 */
export const TEST_WEBHOOK_TYPE = "test";
/** What a message in an endpoint's queue may be: a site event type or a test. */
export type WebhookMessageType = WebhookType | typeof TEST_WEBHOOK_TYPE;

/** What each type reports (spec table), for the OpenAPI document. */
export const WEBHOOK_TYPE_MEANING: Record<WebhookType, string> = {
  connection: "A device went online or offline.",
  connection_confirmed:
    "A location has been offline for 2 hours or more. The return online is not reported by this type.",
  alarm: "A hardware alarm was triggered, for example a case opened (tamper) or vandalism.",
  status:
    "An anomalous device state persists, for example a door left open 5 minutes or more, or an interim state " +
    "that timed out. An alarm tool: it does not replace polling for normal transitions.",
};

/** One site event inside a webhook. */
export const webhookEventSchema = <T extends WebhookType>(type: T) =>
  z.object({
    id: z.string().describe("Event id (`evt_…`), unique; the same event is never in two messages"),
    type: z.literal(type),
    occurred_at: z.string().describe("RFC 3339, when the event happened"),
    location_id: z.string().nullable().describe("The location concerned, null if none"),
    device_id: z.string().nullable().describe("The device concerned, null for a whole location"),
    details: z
      .record(z.string(), z.unknown())
      .describe("What the service knows of the event (type-specific; unknown keys must be ignored)"),
  });

/**
 * The body of every webhook, one shape for aggregated and direct delivery (direct = a batch of one), so a
 * receiver parses one shape. `id` equals the `webhook-id` header and stays the same across retries.
 */
export const webhookPayloadSchema = <T extends WebhookType>(type: T) =>
  z.object({
    id: z.string().describe("Message id (`msg_…`), equal to the webhook-id header; stable across retries"),
    type: z.literal(type),
    created_at: z.string().describe("RFC 3339, when the message was made (its aggregation window closed)"),
    data: z.object({
      events: z
        .array(webhookEventSchema(type))
        .min(1)
        .describe("The events of the window, oldest first; exactly one with direct delivery"),
    }),
  });

export type WebhookEvent = z.infer<ReturnType<typeof webhookEventSchema<WebhookType>>>;
export type WebhookPayload = z.infer<ReturnType<typeof webhookPayloadSchema<WebhookType>>>;

/** The body of any message in an endpoint's queue: a site event type's, or a test message of the same shape. */
export type WebhookMessagePayload = Omit<WebhookPayload, "type" | "data"> & {
  type: WebhookMessageType;
  data: { events: (Omit<WebhookEvent, "type"> & { type: WebhookMessageType })[] };
};
