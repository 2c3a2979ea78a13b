import type { WebhookMessagePayload, WebhookMessageType } from "../../shared/api/webhook.ts";
import type { WebhookMessageStatus, WebhookMessagesTable } from "../store/tables/webhook-tables.ts";

/** The delivery queue's records as the webhook services see them, and the mapping from its rows. */

/** A new message, first in line for an attempt at `at`. */
export type NewMessage = {
  id: string;
  endpointId: string;
  operatorId: string;
  type: WebhookMessageType;
  payload: WebhookMessagePayload;
  eventCount: number;
  at: string;
};

/** A message's place in its endpoint's queue (its body aside). */
export type MessageRecord = {
  id: string;
  endpointId: string;
  operatorId: string;
  type: WebhookMessageType;
  eventCount: number;
  status: WebhookMessageStatus;
  attempts: number;
  nextAttemptAt: string;
  createdAt: string;
  queuedAt: string;
  deliveredAt: string | null;
  deadAt: string | null;
  lastError: string | null;
};

/** One attempt of the delivery log. */
export type AttemptRecord = {
  messageId: string;
  endpointId: string;
  attempt: number;
  at: string;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
};

/** The head of an endpoint's queue, due for an attempt, with what sending it needs. */
export type DueMessage = {
  id: string;
  endpointId: string;
  url: string;
  secrets: string[];
  allowPrivate: boolean;
  /** The body, exactly as stored. */
  payload: string;
  attempts: number;
  nextAttemptAt: string;
  queuedAt: string;
};

export function toMessage(row: Omit<WebhookMessagesTable, "payload">): MessageRecord {
  return {
    id: row.id,
    endpointId: row.endpoint_id,
    operatorId: row.operator_id,
    type: row.type,
    eventCount: row.event_count,
    status: row.status,
    attempts: row.attempts,
    nextAttemptAt: row.next_attempt_at,
    createdAt: row.created_at,
    queuedAt: row.queued_at,
    deliveredAt: row.delivered_at,
    deadAt: row.dead_at,
    lastError: row.last_error,
  };
}

export const MESSAGE_COLUMNS = [
  "id",
  "endpoint_id",
  "operator_id",
  "type",
  "event_count",
  "status",
  "attempts",
  "next_attempt_at",
  "created_at",
  "queued_at",
  "delivered_at",
  "dead_at",
  "last_error",
] as const;
