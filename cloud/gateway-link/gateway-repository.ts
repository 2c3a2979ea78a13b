import type { Executor } from "../store/db.ts";
import type { GatewaysTable } from "../store/schema.ts";

export type GatewayRow = GatewaysTable;

/** Gateways as the link keeps them: status, heartbeat and the version of their device map. */
export function gatewayRepository(db: Executor) {
  return {
    find(id: string): Promise<GatewayRow | undefined> {
      return db.selectFrom("gateways").selectAll().where("id", "=", id).executeTakeFirst();
    },

    async allIds(): Promise<string[]> {
      return (await db.selectFrom("gateways").select("id").orderBy("id").execute()).map((r) => r.id);
    },

    /** The hash a gateway's broker login is checked against; undefined for an unknown gateway. */
    async secretHashOf(id: string): Promise<string | undefined> {
      const row = await db
        .selectFrom("gateways")
        .select("secret_hash")
        .where("id", "=", id)
        .executeTakeFirst();
      return row?.secret_hash;
    },

    /** The operator and location a gateway serves. */
    placeOf(id: string): Promise<Pick<GatewayRow, "operator_id" | "location_id"> | undefined> {
      return db
        .selectFrom("gateways")
        .select(["operator_id", "location_id"])
        .where("id", "=", id)
        .executeTakeFirst();
    },

    /** The gateway's location and its attributes (JSON text), what its device map carries of it. */
    locationOf(id: string): Promise<{ id: string; attrs: string } | undefined> {
      return db
        .selectFrom("gateways")
        .innerJoin("locations", "locations.id", "gateways.location_id")
        .select(["locations.id", "locations.attrs"])
        .where("gateways.id", "=", id)
        .executeTakeFirst();
    },

    /** Every gateway's stored map version, one small row each. */
    mapVersions(): Promise<Pick<GatewayRow, "id" | "map_version">[]> {
      return db.selectFrom("gateways").select(["id", "map_version"]).execute();
    },

    async setMapVersion(id: string, version: string): Promise<void> {
      await db.updateTable("gateways").set({ map_version: version }).where("id", "=", id).execute();
    },

    /** The gateway's retained status (or Last Will), received at `at`. */
    /** The gateway is online in the session `session` (its token; null from gateways that send none). */
    async setOnline(id: string, at: string, session: string | null): Promise<void> {
      await db
        .updateTable("gateways")
        .set({ online: 1, status_at: at, session })
        .where("id", "=", id)
        .execute();
    },

    /**
     * The gateway is offline, unless `session` names a session other than the one last announced online: a
     * Last Will of an earlier session, published late. False when it was stale and changed nothing.
     */
    async setOffline(id: string, at: string, session: string | undefined): Promise<boolean> {
      const res = await db
        .updateTable("gateways")
        .set({ online: 0, status_at: at })
        .where("id", "=", id)
        .$if(session !== undefined, (q) =>
          q.where((eb) => eb.or([eb("session", "is", null), eb("session", "=", session ?? "")])),
        )
        .executeTakeFirst();
      return Number(res.numUpdatedRows) > 0;
    },

    async setHeartbeatAt(id: string, at: string): Promise<void> {
      await db.updateTable("gateways").set({ heartbeat_at: at }).where("id", "=", id).execute();
    },
  };
}

export type GatewayRepository = ReturnType<typeof gatewayRepository>;
