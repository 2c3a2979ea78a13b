import type { Heartbeat } from "../../shared/wire/messages.ts";
import type { Executor } from "../store/db.ts";
import type { GatewaysTable } from "../store/schema.ts";

export type GatewayRow = GatewaysTable;

/** What a heartbeat says of its gateway, as the gateway row keeps it (migration 027). */
export type GatewaySays = Pick<GatewaysTable, "outbox_depth" | "runtime_version" | "runtime_started_at">;

/** A heartbeat of an older gateway, which says none of it. */
export const NOTHING_SAID: GatewaySays = {
  outbox_depth: null,
  runtime_version: null,
  runtime_started_at: null,
};

/**
 * What `hb`, which arrived at `at` (the cloud's clock), says of its gateway. The daemon's start is put on
 * the cloud's clock: `at` less the time the gateway counted from its start to the heartbeat's `sent_at`
 * (both on its own wall clock, so an error of that clock cancels out). A heartbeat sent before the start it
 * names (the clock stepped back since) leaves the start unknown rather than guessed.
 */
export function gatewaySays(hb: Heartbeat, at: string): GatewaySays {
  const { runtime } = hb;
  const ranMs = runtime ? Date.parse(hb.sent_at) - Date.parse(runtime.started_at) : Number.NaN;
  return {
    outbox_depth: hb.outbox?.depth ?? null,
    runtime_version: runtime?.version ?? null,
    runtime_started_at: ranMs >= 0 ? new Date(Date.parse(at) - ranMs).toISOString() : null,
  };
}

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

    /** A heartbeat's arrival and what it said of the gateway (null: it did not say). */
    async setHeartbeatAt(id: string, at: string, said: GatewaySays = NOTHING_SAID): Promise<void> {
      await db
        .updateTable("gateways")
        .set({ heartbeat_at: at, ...said })
        .where("id", "=", id)
        .execute();
    },
  };
}

export type GatewayRepository = ReturnType<typeof gatewayRepository>;
