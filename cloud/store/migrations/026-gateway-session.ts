import type { Kysely, Migration } from "kysely";

/**
 * `gateways.session`: the token of the gateway's MQTT session whose `online` the cloud applied last. Each
 * session's Last Will carries its own token, so a Will of an earlier session that the broker publishes late
 * (a session taken over after a partition) is told from the current session's and does not take an online
 * gateway's devices down (docs/decisions/wire.md). Null for gateways that send no token.
 */
export const gatewaySessionMigration: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable("gateways").addColumn("session", "text").execute();
  },
};
