import { z } from "zod";
import {
  TEST_WEBHOOK_TYPE,
  WEBHOOK_TYPE_MEANING,
  WEBHOOK_TYPES,
  type WebhookType,
  webhookPayloadSchema,
} from "../../shared/api/webhook.ts";
import { AGGREGATION_WINDOW_MS } from "./aggregation-windows.ts";
import { DEAD_AFTER_MS, FIRST_RETRY_MS, MAX_RETRY_MS } from "./retry-schedule.ts";
import { WEBHOOK_TIMEOUT_MS } from "./webhook-sender.ts";

const header = (name: string, description: string, example: string) => ({
  name,
  in: "header" as const,
  required: true,
  description,
  schema: { type: "string" as const },
  example,
});

const HEADERS = [
  header(
    "webhook-id",
    "The message id: the same on every retry and replay of a message (deduplicate on it); equal to the body's id.",
    "msg_0195f0c2a1b27c3d8e4f5a6b7c8d9e0f",
  ),
  header(
    "webhook-timestamp",
    "Unix seconds of this attempt. Refuse a message whose timestamp is more than 5 minutes from your clock.",
    "1768471200",
  ),
  header(
    "webhook-signature",
    "Space-separated `v1,<base64>` signatures (HMAC-SHA256 of `id.timestamp.body` under the endpoint's whsec_ " +
      "secret); during a secret rotation there is one per valid secret and either one verifies.",
    "v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=",
  ),
];

const minutes = (ms: number) => `${ms / 60_000} minute${ms === 60_000 ? "" : "s"}`;

const DELIVERY =
  "Standard Webhooks (https://www.standardwebhooks.com): verify with any of its libraries, e.g. " +
  "`new Webhook(secret).verify(body, headers)` of the `standardwebhooks` npm package. " +
  `Aggregated endpoints get one message per type when its window closes (alarm ${minutes(AGGREGATION_WINDOW_MS.alarm)}, ` +
  `connection, connection_confirmed and status ${minutes(AGGREGATION_WINDOW_MS.connection)}, counted from the first ` +
  "event of the window); direct endpoints get each event at once, as a batch of one. " +
  `Answer 2xx within ${WEBHOOK_TIMEOUT_MS / 1000} s to acknowledge. Anything else is retried under the same ` +
  `webhook-id after ${FIRST_RETRY_MS / 1000} s, then twice as long each time up to ${MAX_RETRY_MS / 60_000} minutes, ` +
  `until the message has waited ${DEAD_AFTER_MS / 3_600_000} hours; then it is kept as dead for the operator to ` +
  "replay. 410 Gone disables the endpoint. Messages of one endpoint arrive in order: the next is sent only " +
  "after the one before was acknowledged or given up. Redirects are not followed. " +
  `Any endpoint may also get a message of type \`${TEST_WEBHOOK_TYPE}\` (one event of that type, no location or ` +
  "device), sent when the operator's staff asks for a test event in the console: acknowledge it like any other; " +
  "it reports nothing.";

function operation(type: WebhookType) {
  const schema = z.toJSONSchema(webhookPayloadSchema(type), { target: "draft-2020-12" }) as Record<
    string,
    unknown
  >;
  delete schema.$schema;
  return {
    post: {
      operationId: `webhook_${type}`,
      summary: `${type} webhook`,
      description: `${WEBHOOK_TYPE_MEANING[type]}\n\n${DELIVERY}`,
      tags: ["Webhooks"],
      security: [],
      parameters: HEADERS,
      requestBody: { required: true, content: { "application/json": { schema } } },
      responses: {
        "2XX": { description: "Acknowledged: the message is delivered" },
        "410": { description: "Gone: the endpoint is disabled until the site manifest declares it again" },
        default: {
          description: "Any other answer, or none in time: retried later under the same webhook-id",
        },
      },
    },
  };
}

/**
 * The OpenAPI 3.1 `webhooks` object: one entry per type, each the request the service makes to an
 * operator's endpoint (registered in the site manifest).
 */
export function webhooksOpenApi(): Record<WebhookType, ReturnType<typeof operation>> {
  return Object.fromEntries(WEBHOOK_TYPES.map((t) => [t, operation(t)])) as Record<
    WebhookType,
    ReturnType<typeof operation>
  >;
}
