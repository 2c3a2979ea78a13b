import type { Executor } from "../store/db.ts";
import type { GatewayKeyVersionsTable } from "../store/tables/key-sync-tables.ts";
import type { WhitelistsTable, WhitelistTargetsTable } from "../store/tables/whitelist-tables.ts";
import type { OperatorScope } from "./console-location-repository.ts";

/** A gateway's key versions as stored, and where it is. */
export type GatewayKeys = { gateway_id: string; location_id: string } & Partial<
  Pick<GatewayKeyVersionsTable, "version" | "confirmed_version" | "confirmed_at" | "updated_at">
>;

/** A location's or a device's name in the console: `#code label`, and a device's alias. */
export type TargetName = { id: string; location_id: string; code: string; label: string; alias?: string };

/** What the console's whitelist views read beside the whitelist service: across operators, and key sync. */
export function consoleWhitelistRepository(db: Executor) {
  return {
    /** The whitelists of the operators in scope, by name (ties by id). */
    whitelistsOf(scope: OperatorScope): Promise<WhitelistsTable[]> {
      let q = db.selectFrom("whitelists").selectAll().orderBy("name").orderBy("id");
      if (scope !== "all") {
        if (scope.length === 0) return Promise.resolve([]);
        q = q.where("operator_id", "in", scope);
      }
      return q.execute();
    },

    /** The operator of a whitelist, any operator's (a superadmin acts on the owner's behalf). */
    async operatorOf(whitelistId: string): Promise<string | undefined> {
      const row = await db
        .selectFrom("whitelists")
        .select("operator_id")
        .where("id", "=", whitelistId)
        .executeTakeFirst();
      return row?.operator_id;
    },

    /** How many cards each of these whitelists holds (a list without cards is left out). */
    async cardCounts(ids: readonly string[]): Promise<Map<string, number>> {
      if (ids.length === 0) return new Map();
      const rows = await db
        .selectFrom("whitelist_entities")
        .select((eb) => ["whitelist_id", eb.fn.countAll<number | string>().as("n")])
        .where("whitelist_id", "in", ids)
        .groupBy("whitelist_id")
        .execute();
      return new Map(rows.map((r) => [r.whitelist_id, Number(r.n)]));
    },

    /** The targets of these whitelists, as stored. */
    async targetsOf(ids: readonly string[]): Promise<WhitelistTargetsTable[]> {
      if (ids.length === 0) return [];
      return await db
        .selectFrom("whitelist_targets")
        .selectAll()
        .where("whitelist_id", "in", ids)
        .orderBy("target_type")
        .orderBy("target_id")
        .execute();
    },

    /** The names of these locations. */
    async locationNames(ids: readonly string[]): Promise<TargetName[]> {
      if (ids.length === 0) return [];
      const rows = await db
        .selectFrom("locations")
        .select(["id", "code", "label"])
        .where("id", "in", ids)
        .execute();
      return rows.map((r) => ({ ...r, location_id: r.id }));
    },

    /** The names of these devices: their alias at their location. */
    async deviceNames(ids: readonly string[]): Promise<TargetName[]> {
      if (ids.length === 0) return [];
      return await db
        .selectFrom("devices as d")
        .innerJoin("locations as l", "l.id", "d.location_id")
        .select(["d.id", "d.location_id", "d.alias", "l.code", "l.label"])
        .where("d.id", "in", ids)
        .execute();
    },

    /** These gateways' key versions (none stored: only where they are). */
    async gatewayKeys(ids: readonly string[]): Promise<GatewayKeys[]> {
      if (ids.length === 0) return [];
      const rows = await db
        .selectFrom("gateways as g")
        .leftJoin("gateway_key_versions as k", "k.gateway_id", "g.id")
        .select([
          "g.id as gateway_id",
          "g.location_id",
          "k.version",
          "k.confirmed_version",
          "k.confirmed_at",
          "k.updated_at",
        ])
        .where("g.id", "in", ids)
        .orderBy("g.id")
        .execute();
      return rows.map((r) => ({
        gateway_id: r.gateway_id,
        location_id: r.location_id,
        ...(r.version === null ? {} : { version: r.version }),
        confirmed_version: r.confirmed_version,
        confirmed_at: r.confirmed_at,
        ...(r.updated_at === null ? {} : { updated_at: r.updated_at }),
      }));
    },

    /** The first version after `held` whose change set is still kept for the gateway, and when it was made. */
    firstChangeAfter(
      gatewayId: string,
      held: number,
    ): Promise<{ version: number; created_at: string } | undefined> {
      return db
        .selectFrom("gateway_key_changes")
        .select(["version", "created_at"])
        .where("gateway_id", "=", gatewayId)
        .where("version", ">", held)
        .orderBy("version")
        .limit(1)
        .executeTakeFirst();
    },
  };
}
