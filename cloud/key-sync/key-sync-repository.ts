import type { TargetType } from "../../shared/domain/whitelist-entity.ts";
import type { Grant } from "../../shared/wire/messages.ts";
import type { Db } from "../store/db.ts";
import { fromJson, toJson } from "../store/json-column.ts";
import type { KeyChangeSet } from "../store/tables/key-sync-tables.ts";
import type { WhitelistEntitiesTable } from "../store/tables/whitelist-tables.ts";

/** The store or one of its transactions; a change set removes grants from a view. */
export type KeySyncExecutor = Pick<Db, "selectFrom" | "updateTable" | "insertInto" | "deleteFrom">;

/** What of a card a grant carries. */
export type GrantEntity = Pick<
  WhitelistEntitiesTable,
  "card_id" | "whitelist_id" | "status" | "expires_at" | "is_master_key"
>;

/** One target of a whitelist at the gateway that drives it (a location's gateway, a device's). */
export type ReachRow = { gateway_id: string; target_type: TargetType; target_id: string };

/** A gateway's key version and the one it last said it holds (null: it never said). */
export type KeyVersions = { version: number; confirmed: number | null };

/** IN lists stay well under both stores' bound-parameter limits. */
const CHUNK = 500;

function chunks<T>(items: readonly T[], size = CHUNK): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

const GRANT_COLUMNS = ["card_id", "whitelist_id", "status", "expires_at", "is_master_key"] as const;

/**
 * The gateways' key views: each gateway's versions, the change set of every version, the grants it should
 * hold now, and the whitelist rows those grants are made of.
 */
export function keySyncRepository(db: KeySyncExecutor) {
  return {
    /** Version 0, never confirmed, for a gateway without a key view yet. */
    async versionsOf(gatewayId: string): Promise<KeyVersions> {
      const row = await db
        .selectFrom("gateway_key_versions")
        .select(["version", "confirmed_version"])
        .where("gateway_id", "=", gatewayId)
        .executeTakeFirst();
      return { version: row?.version ?? 0, confirmed: row?.confirmed_version ?? null };
    },

    /** The online gateways with their versions (version null: no key view yet). */
    async onlineVersions(): Promise<{ id: string; version: number | null; confirmed: number | null }[]> {
      const rows = await db
        .selectFrom("gateways as g")
        .leftJoin("gateway_key_versions as k", "k.gateway_id", "g.id")
        .select(["g.id", "k.version", "k.confirmed_version"])
        .where("g.online", "=", 1)
        .execute();
      return rows.map((r) => ({ id: r.id, version: r.version, confirmed: r.confirmed_version }));
    },

    /** Records the version the gateway says it holds, creating its row (version 0) if need be. */
    async confirm(gatewayId: string, held: number, at: string): Promise<void> {
      await db
        .insertInto("gateway_key_versions")
        .values({
          gateway_id: gatewayId,
          version: 0,
          confirmed_version: held,
          confirmed_at: at,
          updated_at: at,
        })
        .onConflict((oc) =>
          oc.column("gateway_id").doUpdateSet({ confirmed_version: held, confirmed_at: at }),
        )
        .execute();
    },

    /**
     * Bumps the gateway's version (from 0 for a new one) and returns it. One statement reads and bumps:
     * concurrent writers on PostgreSQL queue on the row instead of racing.
     */
    async nextVersion(gatewayId: string, at: string): Promise<number> {
      await db
        .insertInto("gateway_key_versions")
        .values({
          gateway_id: gatewayId,
          version: 0,
          confirmed_version: null,
          confirmed_at: null,
          updated_at: at,
        })
        .onConflict((oc) => oc.column("gateway_id").doNothing())
        .execute();
      const { version } = await db
        .updateTable("gateway_key_versions")
        .set((eb) => ({ version: eb("version", "+", 1), updated_at: at }))
        .where("gateway_id", "=", gatewayId)
        .returning("version")
        .executeTakeFirstOrThrow();
      return version;
    },

    async recordChanges(
      gatewayId: string,
      version: number,
      changes: KeyChangeSet,
      at: string,
    ): Promise<void> {
      await db
        .insertInto("gateway_key_changes")
        .values({ gateway_id: gatewayId, version, changes: toJson(changes), created_at: at })
        .execute();
    },

    /** The stored change sets of versions after `base` up to `upTo`, in version order (gaps left out). */
    async changesBetween(
      gatewayId: string,
      base: number,
      upTo: number,
    ): Promise<{ version: number; changes: KeyChangeSet }[]> {
      const rows = await db
        .selectFrom("gateway_key_changes")
        .select(["version", "changes"])
        .where("gateway_id", "=", gatewayId)
        .where("version", ">", base)
        .where("version", "<=", upTo)
        .orderBy("version")
        .execute();
      return rows.map((r) => ({ version: r.version, changes: fromJson(r.changes) }));
    },

    /** Drops the gateway's change sets up to this version: a delta from before it is then a snapshot. */
    async dropChangesUpTo(gatewayId: string, version: number): Promise<void> {
      await db
        .deleteFrom("gateway_key_changes")
        .where("gateway_id", "=", gatewayId)
        .where("version", "<=", version)
        .execute();
    },

    /** The gateway's whole view, by whitelist, then card. */
    async grantsOf(gatewayId: string): Promise<Grant[]> {
      const rows = await db
        .selectFrom("gateway_grants")
        .select("grant")
        .where("gateway_id", "=", gatewayId)
        .orderBy("whitelist_id")
        .orderBy("card_id")
        .execute();
      return rows.map((r) => fromJson(r.grant));
    },

    /** The gateways whose views hold a grant of the whitelist, once each. */
    async holdersOf(whitelistId: string): Promise<string[]> {
      const rows = await db
        .selectFrom("gateway_grants")
        .select("gateway_id")
        .distinct()
        .where("whitelist_id", "=", whitelistId)
        .execute();
      return rows.map((r) => r.gateway_id);
    },

    /**
     * The grants of the whitelist in the gateway's view (of these cards, or all), by card, as stored JSON:
     * a grant changed when its JSON does (key-view.ts builds them in a fixed key order).
     */
    async heldGrantJson(
      gatewayId: string,
      whitelistId: string,
      cardIds: readonly string[] | null,
    ): Promise<Map<string, string>> {
      const held = new Map<string, string>();
      for (const part of cardIds ? chunks(cardIds) : [null]) {
        let q = db
          .selectFrom("gateway_grants")
          .select(["card_id", "grant"])
          .where("gateway_id", "=", gatewayId)
          .where("whitelist_id", "=", whitelistId);
        if (part) q = q.where("card_id", "in", part);
        for (const g of await q.execute()) held.set(g.card_id, g.grant);
      }
      return held;
    },

    /** Upserts these grants into the gateway's view. */
    async putGrants(gatewayId: string, grants: readonly Grant[]): Promise<void> {
      for (const part of chunks(grants, 200))
        await db
          .insertInto("gateway_grants")
          .values(
            part.map((g) => ({
              gateway_id: gatewayId,
              whitelist_id: g.whitelist_id,
              card_id: g.card_id,
              grant: toJson(g),
            })),
          )
          .onConflict((oc) =>
            oc
              .columns(["gateway_id", "whitelist_id", "card_id"])
              .doUpdateSet((eb) => ({ grant: eb.ref("excluded.grant") })),
          )
          .execute();
    },

    /** Removes the whitelist's grants of these cards from the gateway's view. */
    async dropGrants(gatewayId: string, whitelistId: string, cardIds: readonly string[]): Promise<void> {
      for (const part of chunks(cardIds))
        await db
          .deleteFrom("gateway_grants")
          .where("gateway_id", "=", gatewayId)
          .where("whitelist_id", "=", whitelistId)
          .where("card_id", "in", part)
          .execute();
    },

    /** The whitelist's cards (these, or all), in no order. */
    async entitiesOf(whitelistId: string, cardIds: readonly string[] | null): Promise<GrantEntity[]> {
      const out: GrantEntity[] = [];
      for (const part of cardIds ? chunks(cardIds) : [null]) {
        let q = db
          .selectFrom("whitelist_entities")
          .select(GRANT_COLUMNS)
          .where("whitelist_id", "=", whitelistId);
        if (part) q = q.where("card_id", "in", part);
        out.push(...(await q.execute()));
      }
      return out;
    },

    /** The card in every whitelist that has it, in no order. */
    entitiesOfCard(cardId: string): Promise<GrantEntity[]> {
      return db
        .selectFrom("whitelist_entities")
        .select(GRANT_COLUMNS)
        .where("card_id", "=", cardId)
        .execute();
    },

    /**
     * The whitelist's targets at the gateways that drive them: a location at its gateways, a device at
     * its gateway (none when it has none). Only keys_only targets unless `keysOnly` is false.
     */
    async reachOf(whitelistId: string, keysOnly: boolean): Promise<ReachRow[]> {
      let locations = db
        .selectFrom("whitelist_targets as t")
        .innerJoin("gateways as g", "g.location_id", "t.target_id")
        .select(["g.id as gateway_id", "t.target_id"])
        .where("t.whitelist_id", "=", whitelistId)
        .where("t.target_type", "=", "location");
      if (keysOnly) locations = locations.where("t.keys_only", "=", 1);
      let devices = db
        .selectFrom("whitelist_targets as t")
        .innerJoin("devices as d", "d.id", "t.target_id")
        .select(["d.gateway_id", "t.target_id"])
        .where("t.whitelist_id", "=", whitelistId)
        .where("t.target_type", "=", "device")
        .where("d.gateway_id", "is not", null);
      if (keysOnly) devices = devices.where("t.keys_only", "=", 1);
      const out: ReachRow[] = [];
      for (const r of await locations.execute())
        out.push({ gateway_id: r.gateway_id, target_type: "location", target_id: r.target_id });
      for (const r of await devices.execute())
        if (r.gateway_id)
          out.push({ gateway_id: r.gateway_id, target_type: "device", target_id: r.target_id });
      return out;
    },
  };
}

export type KeySyncRepository = ReturnType<typeof keySyncRepository>;
