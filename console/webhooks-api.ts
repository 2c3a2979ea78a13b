import type {
  ConsoleWebhookDelivery,
  ConsoleWebhookEndpoint,
  ConsoleWebhookEndpointList,
  ConsoleWebhookLog,
  ConsoleWebhookQueued,
} from "../shared/api/console-webhooks.ts";
import { call } from "./api.ts";
import { queryOf } from "./sessions-api.ts";

/** The console's calls for webhooks (cloud/http/routes/console-webhooks.ts). */

export type { ConsoleWebhookDelivery, ConsoleWebhookEndpoint, ConsoleWebhookLog };

export const listWebhooks = () => call<ConsoleWebhookEndpointList>("GET", "/console/api/webhooks");

export const getWebhookLog = (id: string, cursor?: string) =>
  call<ConsoleWebhookLog>(
    "GET",
    `/console/api/webhooks/${encodeURIComponent(id)}${queryOf({ limit: "20", cursor })}`,
  );

export const replayDelivery = (endpointId: string, messageId: string) =>
  call<ConsoleWebhookQueued>(
    "POST",
    `/console/api/webhooks/${encodeURIComponent(endpointId)}/deliveries/${encodeURIComponent(messageId)}/replay`,
  );

export const sendTestEvent = (endpointId: string) =>
  call<ConsoleWebhookQueued>("POST", `/console/api/webhooks/${encodeURIComponent(endpointId)}/test-event`);
