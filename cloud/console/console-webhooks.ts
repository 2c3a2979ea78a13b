import type {
  ConsoleWebhookEndpointList,
  ConsoleWebhookLog,
  ConsoleWebhookLogQuery,
  ConsoleWebhookQueued,
} from "../../shared/api/console-webhooks.ts";
import { DEFAULT_WEBHOOK_LOG_LIMIT } from "../../shared/api/console-webhooks.ts";
import { AppError } from "../../shared/api/errors.ts";
import { TEST_WEBHOOK_TYPE } from "../../shared/api/webhook.ts";
import type { Clock } from "../../shared/time/clock.ts";
import { recordAudit } from "../audit/audit-log.ts";
import type { SignedIn } from "../staff/console-sessions.ts";
import { staffOrigin, staffPrincipal } from "../staff/staff-principal.ts";
import type { Db } from "../store/db.ts";
import { webhookDeliveryRepository } from "../webhooks/webhook-delivery-repository.ts";
import { type WebhookEndpoint, webhookEndpointRepository } from "../webhooks/webhook-endpoint-repository.ts";
import { newEventId } from "../webhooks/webhook-payload.ts";
import { enqueueMessage } from "../webhooks/webhook-queue.ts";
import { deliveryPage, presentEndpoints } from "./console-webhook-log.ts";

const noEndpoint = (id: string) => new AppError("ERRORS.NOT_FOUND", `No webhook endpoint with id ${id}`);

/**
 * The console's webhooks (docs/decisions/console.md): the operator's endpoints and their delivery logs for
 * every role; replaying a delivery and sending a test event for those who act. Both go through the webhook
 * queue, so the delivery worker sends them as any message (signed, retried, in the endpoint's order).
 */
export function createConsoleWebhooks(deps: { db: Db; clock: Clock }) {
  const { db, clock } = deps;

  /** The endpoint, within the staff member's operator (any, for a superadmin); 404 otherwise. */
  async function endpointOf(signed: SignedIn, id: string): Promise<WebhookEndpoint> {
    const found = await webhookEndpointRepository(db).find(id);
    const own = signed.staff.operatorId;
    if (!found || (own !== null && found.operatorId !== own)) throw noEndpoint(id);
    return found;
  }

  return {
    async list(signed: SignedIn): Promise<ConsoleWebhookEndpointList> {
      const own = signed.staff.operatorId;
      const all = await webhookEndpointRepository(db).all();
      const mine = all.filter((e) => own === null || e.operatorId === own);
      return { data: await presentEndpoints(db, mine) };
    },

    async log(signed: SignedIn, id: string, q: ConsoleWebhookLogQuery): Promise<ConsoleWebhookLog> {
      const endpoint = await endpointOf(signed, id);
      staffPrincipal(signed, endpoint.operatorId, "read");
      const [presented] = await presentEndpoints(db, [endpoint]);
      if (!presented) throw noEndpoint(id);
      const page = await deliveryPage(db, endpoint.id, {
        limit: q.limit ?? DEFAULT_WEBHOOK_LOG_LIMIT,
        ...(q.cursor ? { cursor: q.cursor } : {}),
      });
      return { endpoint: presented, ...page };
    },

    /**
     * Queues a delivered or dead message of the endpoint again: the same message id (the `webhook-id`
     * receivers dedupe on) and body, attempts counted afresh, at the end of the endpoint's queue.
     */
    async replay(
      signed: SignedIn,
      endpointId: string,
      messageId: string,
      correlationId: string,
    ): Promise<ConsoleWebhookQueued> {
      const endpoint = await endpointOf(signed, endpointId);
      staffPrincipal(signed, endpoint.operatorId, "act");
      const now = clock.now();
      return await db.transaction().execute(async (trx) => {
        const queue = webhookDeliveryRepository(trx);
        const found = await queue.findWithEndpoint(messageId);
        if (!found || found.message.endpointId !== endpoint.id)
          throw new AppError("ERRORS.NOT_FOUND", `No delivery ${messageId} to this endpoint`);
        const m = found.message;
        if (m.status === "pending")
          throw new AppError("ERRORS.BAD_REQUEST", "This delivery is still pending: it will be sent anyway");
        if (!(await queue.requeue(m.id, m.status, now.toISOString())))
          throw new AppError("ERRORS.BAD_REQUEST", "This delivery changed meanwhile; look again");
        await recordAudit(
          trx,
          staffOrigin(signed, correlationId),
          {
            operatorId: endpoint.operatorId,
            action: "webhook.replay",
            subject: { type: "webhook_endpoint", id: endpoint.id },
            comment: `message ${m.id}`,
            changes: { status: { from: m.status, to: "pending" } },
          },
          now,
        );
        return { message_id: m.id, endpoint_id: endpoint.id, endpoint_enabled: endpoint.enabled };
      });
    },

    /** Queues a `test` message to the endpoint (one event, no location or device), sent as any message. */
    async sendTestEvent(
      signed: SignedIn,
      endpointId: string,
      correlationId: string,
    ): Promise<ConsoleWebhookQueued> {
      const endpoint = await endpointOf(signed, endpointId);
      staffPrincipal(signed, endpoint.operatorId, "act");
      if (!endpoint.enabled)
        throw new AppError("ERRORS.BAD_REQUEST", "The endpoint is disabled: nothing is sent to it");
      const now = clock.now();
      return await db.transaction().execute(async (trx) => {
        const messageId = await enqueueMessage(trx, {
          endpointId: endpoint.id,
          operatorId: endpoint.operatorId,
          type: TEST_WEBHOOK_TYPE,
          events: [
            {
              id: newEventId(),
              type: TEST_WEBHOOK_TYPE,
              occurred_at: now.toISOString(),
              location_id: null,
              device_id: null,
              details: { note: "A test event sent from the operator console" },
            },
          ],
          now,
        });
        await recordAudit(
          trx,
          staffOrigin(signed, correlationId),
          {
            operatorId: endpoint.operatorId,
            action: "webhook.test_event",
            subject: { type: "webhook_endpoint", id: endpoint.id },
            comment: `message ${messageId}`,
          },
          now,
        );
        return { message_id: messageId, endpoint_id: endpoint.id, endpoint_enabled: true };
      });
    },
  };
}

export type ConsoleWebhooks = ReturnType<typeof createConsoleWebhooks>;
