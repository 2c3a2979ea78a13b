import type { Kysely, Migration } from "kysely";

/**
 * What a gateway's latest heartbeat said of itself, for the console's gateway panel: how many rows its outbox
 * holds unconfirmed, its package version, and when its daemon started, put on the cloud's clock
 * (cloud/gateway-link/heartbeat-intake.ts). Written with `heartbeat_at`, in the same statement; null where
 * the heartbeat did not say (older gateways).
 */
export const gatewayRuntimeMigration: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable("gateways").addColumn("outbox_depth", "integer").execute();
    await db.schema.alterTable("gateways").addColumn("runtime_version", "text").execute();
    await db.schema.alterTable("gateways").addColumn("runtime_started_at", "text").execute();
  },
};
