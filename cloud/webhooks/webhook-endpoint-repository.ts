import type { WebhookType } from "../../shared/api/webhook.ts";
import type { Executor } from "../store/db.ts";
import { fromJson, toJson } from "../store/json-column.ts";
import type { WebhookDelivery, WebhookEndpointsTable } from "../store/tables/webhook-tables.ts";

/** An operator's webhook endpoint, as the site manifest declared it. */
export type WebhookEndpoint = {
  id: string;
  operatorId: string;
  url: string;
  /** Signing secrets, newest first (two during a rotation). */
  secrets: string[];
  types: WebhookType[];
  delivery: WebhookDelivery;
  allowPrivate: boolean;
  enabled: boolean;
  disabledReason: string | null;
  createdAt: string;
  updatedAt: string;
};

/** What the manifest sets on an endpoint (the rest is its identity and bookkeeping). */
export type EndpointSettings = Omit<WebhookEndpoint, "id" | "operatorId" | "createdAt" | "updatedAt">;

function toEndpoint(row: WebhookEndpointsTable): WebhookEndpoint {
  return {
    id: row.id,
    operatorId: row.operator_id,
    url: row.url,
    secrets: fromJson(row.secrets),
    types: fromJson(row.types),
    delivery: row.delivery,
    allowPrivate: row.allow_private === 1,
    enabled: row.enabled === 1,
    disabledReason: row.disabled_reason,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

function toColumns(s: EndpointSettings) {
  return {
    url: s.url,
    secrets: toJson(s.secrets),
    types: toJson(s.types),
    delivery: s.delivery,
    allow_private: s.allowPrivate ? 1 : 0,
    enabled: s.enabled ? 1 : 0,
    disabled_reason: s.disabledReason,
  };
}

/** Webhook endpoints: only this repository reads or writes their table. */
export function webhookEndpointRepository(db: Executor) {
  return {
    async find(id: string): Promise<WebhookEndpoint | undefined> {
      const row = await db
        .selectFrom("webhook_endpoints")
        .selectAll()
        .where("id", "=", id)
        .executeTakeFirst();
      return row && toEndpoint(row);
    },

    /** Every endpoint, by operator then id. */
    async all(): Promise<WebhookEndpoint[]> {
      const rows = await db
        .selectFrom("webhook_endpoints")
        .selectAll()
        .orderBy("operator_id")
        .orderBy("id")
        .execute();
      return rows.map(toEndpoint);
    },

    /** The operator's enabled endpoints subscribed to `type`, by id (of one delivery when given). */
    async subscribed(
      operatorId: string,
      type: WebhookType,
      delivery?: WebhookDelivery,
    ): Promise<WebhookEndpoint[]> {
      let q = db
        .selectFrom("webhook_endpoints")
        .selectAll()
        .where("operator_id", "=", operatorId)
        .where("enabled", "=", 1);
      if (delivery) q = q.where("delivery", "=", delivery);
      const rows = await q.orderBy("id").execute();
      return rows.map(toEndpoint).filter((e) => e.types.includes(type));
    },

    /** Ids of the operator's enabled endpoints. */
    async enabledIds(operatorId: string): Promise<string[]> {
      const rows = await db
        .selectFrom("webhook_endpoints")
        .select("id")
        .where("operator_id", "=", operatorId)
        .where("enabled", "=", 1)
        .execute();
      return rows.map((r) => r.id);
    },

    async insert(e: WebhookEndpoint): Promise<void> {
      await db
        .insertInto("webhook_endpoints")
        .values({
          id: e.id,
          operator_id: e.operatorId,
          ...toColumns(e),
          created_at: e.createdAt,
          updated_at: e.updatedAt,
        })
        .execute();
    },

    async update(id: string, s: EndpointSettings, updatedAt: string): Promise<void> {
      await db
        .updateTable("webhook_endpoints")
        .set({ ...toColumns(s), updated_at: updatedAt })
        .where("id", "=", id)
        .execute();
    },

    /** Stops the endpoint (no new messages, no attempts) and says why. */
    async disable(id: string, reason: string, at: string): Promise<void> {
      await db
        .updateTable("webhook_endpoints")
        .set({ enabled: 0, disabled_reason: reason, updated_at: at })
        .where("id", "=", id)
        .execute();
    },
  };
}

export type WebhookEndpointRepository = ReturnType<typeof webhookEndpointRepository>;
