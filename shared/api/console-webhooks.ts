import { z } from "zod";

/** One attempt of a delivery: when, the receiver's HTTP status (null without an answer), the error, how long. */
export const ConsoleWebhookAttempt = z.object({
  attempt: z.number(),
  at: z.string(),
  status_code: z.number().nullable(),
  error: z.string().nullable(),
  duration_ms: z.number(),
});
export type ConsoleWebhookAttempt = z.infer<typeof ConsoleWebhookAttempt>;

/** The latest attempt to an endpoint, with the message it was of. */
export const ConsoleWebhookLastAttempt = ConsoleWebhookAttempt.extend({ message_id: z.string() });

/** An operator's webhook endpoint as the console lists it. */
export const ConsoleWebhookEndpoint = z.object({
  id: z.string(),
  operator_id: z.string(),
  url: z.string(),
  types: z.array(z.string()),
  delivery: z.enum(["aggregated", "direct"]),
  enabled: z.boolean(),
  disabled_reason: z.string().nullable(),
  last_attempt: ConsoleWebhookLastAttempt.nullable(),
});
export type ConsoleWebhookEndpoint = z.infer<typeof ConsoleWebhookEndpoint>;

export const ConsoleWebhookEndpointList = z.object({ data: z.array(ConsoleWebhookEndpoint) });
export type ConsoleWebhookEndpointList = z.infer<typeof ConsoleWebhookEndpointList>;

/**
 * One delivery (a message of the endpoint's queue): its stable id (the `webhook-id` a receiver dedupes
 * on), type, the ids of the events it carries, where it stands, and every attempt in the order made.
 */
export const ConsoleWebhookDelivery = z.object({
  id: z.string(),
  type: z.string(),
  event_ids: z.array(z.string()),
  status: z.enum(["pending", "delivered", "dead"]),
  created_at: z.string(),
  queued_at: z.string(),
  next_attempt_at: z.string().nullable(),
  delivered_at: z.string().nullable(),
  dead_at: z.string().nullable(),
  last_error: z.string().nullable(),
  attempts: z.array(ConsoleWebhookAttempt),
});
export type ConsoleWebhookDelivery = z.infer<typeof ConsoleWebhookDelivery>;

/** An endpoint with a page of its delivery log, newest first; `next_cursor` reads on (null: the last). */
export const ConsoleWebhookLog = z.object({
  endpoint: ConsoleWebhookEndpoint,
  deliveries: z.array(ConsoleWebhookDelivery),
  next_cursor: z.string().nullable(),
});
export type ConsoleWebhookLog = z.infer<typeof ConsoleWebhookLog>;

export const MAX_WEBHOOK_LOG_LIMIT = 100;
export const DEFAULT_WEBHOOK_LOG_LIMIT = 20;

export const ConsoleWebhookLogQuery = z.strictObject({
  limit: z
    .string()
    .regex(/^\d+$/, "must be a whole number")
    .transform(Number)
    .pipe(z.number().int().min(1).max(MAX_WEBHOOK_LOG_LIMIT))
    .optional(),
  cursor: z.string().min(1).max(500).optional(),
});
export type ConsoleWebhookLogQuery = z.infer<typeof ConsoleWebhookLogQuery>;

/** What a replay or a test event queued: the message, to be sent by the delivery worker. */
export const ConsoleWebhookQueued = z.object({
  message_id: z.string(),
  endpoint_id: z.string(),
  endpoint_enabled: z.boolean(),
});
export type ConsoleWebhookQueued = z.infer<typeof ConsoleWebhookQueued>;
