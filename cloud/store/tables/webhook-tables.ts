import type {
  WebhookEvent,
  WebhookMessagePayload,
  WebhookMessageType,
  WebhookType,
} from "../../../shared/api/webhook.ts";
import type { Json } from "../json-column.ts";

/** Store tables of outbound webhooks (see cloud/store/schema.ts for the conventions). */

export type WebhookDelivery = "aggregated" | "direct";
export type WebhookMessageStatus = "pending" | "delivered" | "dead";

/** An operator's webhook endpoint, declared in the site manifest. */
export interface WebhookEndpointsTable {
  id: string;
  operator_id: string;
  url: string;
  /** Signing secrets (`whsec_…`), newest first; two during a rotation, each signs every message. */
  secrets: Json<string[]>;
  types: Json<WebhookType[]>;
  delivery: WebhookDelivery;
  /** 0/1: may reach loopback, private and link-local addresses (demo, tests). */
  allow_private: number;
  /** 0/1: no new messages and no attempts while 0 (left out of the manifest, or the receiver answered 410). */
  enabled: number;
  disabled_reason: string | null;
  created_at: string;
  updated_at: string;
}

/** A site event waiting for its aggregation window (per operator and type) to close. */
export interface WebhookPendingEventsTable {
  id: string;
  operator_id: string;
  type: WebhookType;
  event: Json<WebhookEvent>;
  /** When it was buffered (cloud clock); the window of its operator and type starts at the oldest. */
  created_at: string;
}

/** One webhook to one endpoint: a direct event or an aggregated batch, retried under the same id. */
export interface WebhookMessagesTable {
  /** `msg_…`, the webhook-id header and the body's id. */
  id: string;
  endpoint_id: string;
  operator_id: string;
  type: WebhookMessageType;
  /** The exact body sent on every attempt. */
  payload: Json<WebhookMessagePayload>;
  event_count: number;
  status: WebhookMessageStatus;
  /** Attempts since it was queued (a replay starts again at 0). */
  attempts: number;
  /** When it may be tried next; while an attempt runs, the claim's lease. */
  next_attempt_at: string;
  created_at: string;
  /** When it entered the queue (made, or replayed): its place in the endpoint's order and its day to live. */
  queued_at: string;
  delivered_at: string | null;
  dead_at: string | null;
  last_error: string | null;
}

/** The delivery log: one row per attempt. */
export interface WebhookAttemptsTable {
  id: string;
  message_id: string;
  endpoint_id: string;
  /** 1-based within the message's current queueing. */
  attempt: number;
  at: string;
  /** The receiver's HTTP status, null when there was no answer. */
  status_code: number | null;
  error: string | null;
  duration_ms: number;
}

export interface WebhookTables {
  webhook_endpoints: WebhookEndpointsTable;
  webhook_pending_events: WebhookPendingEventsTable;
  webhook_messages: WebhookMessagesTable;
  webhook_attempts: WebhookAttemptsTable;
}
