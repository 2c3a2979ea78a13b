import type { Executor } from "../store/db.ts";
import type { GatewayOutboxesTable, GatewaysTable, LocationsTable } from "../store/schema.ts";
import type { GatewayKeyVersionsTable } from "../store/tables/key-sync-tables.ts";

/** The operators a staff member reads: every one (a superadmin), or those named. */
export type OperatorScope = "all" | readonly string[];

/** A gateway with what the cloud keeps of its outboxes and its key set. */
export type GatewayRecord = {
  gateway: GatewaysTable;
  outboxes: Pick<GatewayOutboxesTable, "outbox_id" | "unconfirmed_from" | "reported_at">[];
  /** The highest seq applied per outbox (its dedup rows; pruned ones are forgotten). */
  lastApplied: Map<string, number>;
  keys: Pick<GatewayKeyVersionsTable, "version" | "confirmed_version" | "confirmed_at"> | undefined;
};

/** What the console's location views read that the public API's repositories do not: across operators. */
export function consoleLocationRepository(db: Executor) {
  return {
    /** Every location of the operators in scope, by code (ties by id). */
    locationsOf(scope: OperatorScope): Promise<LocationsTable[]> {
      let q = db.selectFrom("locations").selectAll().orderBy("code").orderBy("id");
      if (scope !== "all") {
        if (scope.length === 0) return Promise.resolve([]);
        q = q.where("operator_id", "in", scope);
      }
      return q.execute();
    },

    /** The location if it belongs to an operator in scope; another operator's is as missing as none. */
    locationIn(scope: OperatorScope, id: string): Promise<LocationsTable | undefined> {
      let q = db.selectFrom("locations").selectAll().where("id", "=", id);
      if (scope !== "all") {
        if (scope.length === 0) return Promise.resolve(undefined);
        q = q.where("operator_id", "in", scope);
      }
      return q.executeTakeFirst();
    },

    /** The start of each location's latest confirmed outage (2 hours dark), by location. */
    async latestOutages(locationIds: readonly string[]): Promise<Map<string, string>> {
      const latest = new Map<string, string>();
      for (let i = 0; i < locationIds.length; i += 500) {
        const rows = await db
          .selectFrom("location_outages")
          .select(["location_id", "offline_since"])
          .where("location_id", "in", locationIds.slice(i, i + 500))
          .execute();
        for (const r of rows)
          if (r.offline_since > (latest.get(r.location_id) ?? "")) latest.set(r.location_id, r.offline_since);
      }
      return latest;
    },

    /** The location's gateways, by id, each with its outboxes and key-set versions. */
    async gatewaysAt(locationId: string): Promise<GatewayRecord[]> {
      const gateways = await db
        .selectFrom("gateways")
        .selectAll()
        .where("location_id", "=", locationId)
        .orderBy("id")
        .execute();
      const out: GatewayRecord[] = [];
      for (const gateway of gateways) {
        const outboxes = await db
          .selectFrom("gateway_outboxes")
          .select(["outbox_id", "unconfirmed_from", "reported_at"])
          .where("gateway_id", "=", gateway.id)
          .orderBy("reported_at", "desc")
          .execute();
        const applied = await db
          .selectFrom("applied_seqs")
          .select(["outbox_id", (eb) => eb.fn.max("seq").as("seq")])
          .where("gateway_id", "=", gateway.id)
          .groupBy("outbox_id")
          .execute();
        const keys = await db
          .selectFrom("gateway_key_versions")
          .select(["version", "confirmed_version", "confirmed_at"])
          .where("gateway_id", "=", gateway.id)
          .executeTakeFirst();
        const lastApplied = new Map(applied.map((a) => [a.outbox_id, Number(a.seq)]));
        out.push({ gateway, outboxes, lastApplied, keys });
      }
      return out;
    },
  };
}
