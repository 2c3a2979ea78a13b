import { sql } from "kysely";
import type { TargetType } from "../../shared/domain/whitelist-entity.ts";
import type { Db } from "../store/db.ts";
import type {
  WhitelistEntitiesTable,
  WhitelistsTable,
  WhitelistTargetsTable,
} from "../store/tables/whitelist-tables.ts";

/** The store or one of its transactions; removing a card or a target deletes. */
export type WhitelistExecutor = Pick<Db, "selectFrom" | "updateTable" | "insertInto" | "deleteFrom">;

/** A card's record as written: everything but its keys and when it was created. */
export type EntityFields = Pick<
  WhitelistEntitiesTable,
  "status" | "expires_at" | "is_master_key" | "comment" | "updated_at"
>;

/** One target of a whitelist: a device or a location, by type. */
export type TargetKey = { whitelistId: string; type: TargetType; id: string };

/** A whitelist's activity at a location, as the location and device records show it. */
export type LocationAllowlist = { location_id: string; whitelist_id: string };

/** The whitelists of an operator, their cards and their targets. */
export function whitelistRepository(db: WhitelistExecutor) {
  const target = ({ whitelistId, type, id }: TargetKey) =>
    ({ whitelist_id: whitelistId, target_type: type, target_id: id }) as const;

  return {
    find(id: string): Promise<WhitelistsTable | undefined> {
      return db.selectFrom("whitelists").selectAll().where("id", "=", id).executeTakeFirst();
    },

    /** Another operator's whitelist is exactly as missing as one that does not exist. */
    findForOperator(operatorId: string, id: string): Promise<WhitelistsTable | undefined> {
      return db
        .selectFrom("whitelists")
        .selectAll()
        .where("id", "=", id)
        .where("operator_id", "=", operatorId)
        .executeTakeFirst();
    },

    /** The operator's whitelists by name, then id. */
    listForOperator(operatorId: string): Promise<WhitelistsTable[]> {
      return db
        .selectFrom("whitelists")
        .selectAll()
        .where("operator_id", "=", operatorId)
        .orderBy("name")
        .orderBy("id")
        .execute();
    },

    /** The operator's whitelists that target the location or any of its devices, by name, then id. */
    atLocation(operatorId: string, locationId: string): Promise<WhitelistsTable[]> {
      return db
        .selectFrom("whitelists as w")
        .selectAll("w")
        .where("w.operator_id", "=", operatorId)
        .where((eb) =>
          eb.exists(
            eb
              .selectFrom("whitelist_targets as t")
              .select("t.whitelist_id")
              .whereRef("t.whitelist_id", "=", "w.id")
              .where((t) =>
                t.or([
                  t.and([t("t.target_type", "=", "location"), t("t.target_id", "=", locationId)]),
                  t.and([
                    t("t.target_type", "=", "device"),
                    t(
                      "t.target_id",
                      "in",
                      t.selectFrom("devices").select("id").where("location_id", "=", locationId),
                    ),
                  ]),
                ]),
              ),
          ),
        )
        .orderBy("w.name")
        .orderBy("w.id")
        .execute();
    },

    async insert(row: WhitelistsTable): Promise<void> {
      await db.insertInto("whitelists").values(row).execute();
    },

    async describe(id: string, d: { name: string; description: string; updated_at: string }): Promise<void> {
      await db.updateTable("whitelists").set(d).where("id", "=", id).execute();
    },

    /** The whitelist's cards by card id. */
    entities(whitelistId: string): Promise<WhitelistEntitiesTable[]> {
      return db
        .selectFrom("whitelist_entities")
        .selectAll()
        .where("whitelist_id", "=", whitelistId)
        .orderBy("card_id")
        .execute();
    },

    findEntity(whitelistId: string, cardId: string): Promise<WhitelistEntitiesTable | undefined> {
      return db
        .selectFrom("whitelist_entities")
        .selectAll()
        .where("whitelist_id", "=", whitelistId)
        .where("card_id", "=", cardId)
        .executeTakeFirst();
    },

    async insertEntity(row: WhitelistEntitiesTable): Promise<void> {
      await db.insertInto("whitelist_entities").values(row).execute();
    },

    async updateEntity(whitelistId: string, cardId: string, fields: EntityFields): Promise<void> {
      await db
        .updateTable("whitelist_entities")
        .set(fields)
        .where("whitelist_id", "=", whitelistId)
        .where("card_id", "=", cardId)
        .execute();
    },

    /** Writes the card's whole record, replacing one already in the list (its created_at stays). */
    async putEntity(
      whitelistId: string,
      cardId: string,
      fields: EntityFields,
      createdAt: string,
    ): Promise<void> {
      await db
        .insertInto("whitelist_entities")
        .values({ whitelist_id: whitelistId, card_id: cardId, created_at: createdAt, ...fields })
        .onConflict((oc) => oc.columns(["whitelist_id", "card_id"]).doUpdateSet(fields))
        .execute();
    },

    /** Whether the card was in the list. */
    async removeEntity(whitelistId: string, cardId: string): Promise<boolean> {
      const { numDeletedRows } = await db
        .deleteFrom("whitelist_entities")
        .where("whitelist_id", "=", whitelistId)
        .where("card_id", "=", cardId)
        .executeTakeFirst();
      return Number(numDeletedRows) > 0;
    },

    /** The whitelist's targets (of one type when given), by type, then id. */
    targets(whitelistId: string, type?: TargetType): Promise<WhitelistTargetsTable[]> {
      let q = db.selectFrom("whitelist_targets").selectAll().where("whitelist_id", "=", whitelistId);
      if (type) q = q.where("target_type", "=", type);
      return q.orderBy("target_type").orderBy("target_id").execute();
    },

    findTarget(key: TargetKey): Promise<WhitelistTargetsTable | undefined> {
      const t = target(key);
      return db
        .selectFrom("whitelist_targets")
        .selectAll()
        .where("whitelist_id", "=", t.whitelist_id)
        .where("target_type", "=", t.target_type)
        .where("target_id", "=", t.target_id)
        .executeTakeFirst();
    },

    async insertTarget(key: TargetKey, keysOnly: number, createdAt: string): Promise<void> {
      await db
        .insertInto("whitelist_targets")
        .values({ ...target(key), keys_only: keysOnly, created_at: createdAt })
        .execute();
    },

    async setKeysOnly(key: TargetKey, keysOnly: number): Promise<void> {
      const t = target(key);
      await db
        .updateTable("whitelist_targets")
        .set({ keys_only: keysOnly })
        .where("whitelist_id", "=", t.whitelist_id)
        .where("target_type", "=", t.target_type)
        .where("target_id", "=", t.target_id)
        .execute();
    },

    /** Whether the target was there. */
    async removeTarget(key: TargetKey): Promise<boolean> {
      const t = target(key);
      const { numDeletedRows } = await db
        .deleteFrom("whitelist_targets")
        .where("whitelist_id", "=", t.whitelist_id)
        .where("target_type", "=", t.target_type)
        .where("target_id", "=", t.target_id)
        .executeTakeFirst();
      return Number(numDeletedRows) > 0;
    },

    /** Whether the operator has a device or location (by type) with this id: what a list may target. */
    async isOperatorsTarget(operatorId: string, type: TargetType, id: string): Promise<boolean> {
      const row = await db
        .selectFrom(type === "device" ? "devices" : "locations")
        .select("id")
        .where("id", "=", id)
        .where("operator_id", "=", operatorId)
        .executeTakeFirst();
      return row !== undefined;
    },

    /** The id of the device with this alias at the location: a manifest names a target device so. */
    async deviceIdByAlias(locationId: string, alias: string): Promise<string | undefined> {
      const row = await db
        .selectFrom("devices")
        .select("id")
        .where("location_id", "=", locationId)
        .where("alias", "=", alias)
        .executeTakeFirst();
      return row?.id;
    },

    /**
     * How many whitelists target the device directly, counted with the device's row locked (a no-op
     * write) until the transaction ends, so two lists added at once on PostgreSQL take turns.
     */
    async holdDeviceCountingLists(deviceId: string): Promise<number> {
      await db.updateTable("devices").set({ id: sql<string>`id` }).where("id", "=", deviceId).execute();
      const { n } = await db
        .selectFrom("whitelist_targets")
        .select((eb) => eb.fn.countAll<number | string>().as("n"))
        .where("target_type", "=", "device")
        .where("target_id", "=", deviceId)
        .executeTakeFirstOrThrow();
      return Number(n);
    },

    /**
     * The whitelists targeting each of these locations or one of its devices, a pair per target (a list
     * may appear more than once for a location), in no order.
     */
    async allowlistsAt(locationIds: readonly string[]): Promise<LocationAllowlist[]> {
      if (locationIds.length === 0) return [];
      const [direct, viaDevices] = await Promise.all([
        db
          .selectFrom("whitelist_targets")
          .select(["target_id as location_id", "whitelist_id"])
          .where("target_type", "=", "location")
          .where("target_id", "in", locationIds)
          .execute(),
        db
          .selectFrom("whitelist_targets as t")
          .innerJoin("devices as d", "d.id", "t.target_id")
          .select(["d.location_id", "t.whitelist_id"])
          .where("t.target_type", "=", "device")
          .where("d.location_id", "in", locationIds)
          .execute(),
      ]);
      return [...direct, ...viaDevices];
    },

    /** Which of these devices and locations a whitelist targets, once each. */
    async targetedAmong(
      deviceIds: readonly string[],
      locationIds: readonly string[],
    ): Promise<Pick<WhitelistTargetsTable, "target_type" | "target_id">[]> {
      const among = (type: TargetType, ids: readonly string[]) => (ids.length === 0 ? [] : [{ type, ids }]);
      const wanted = [...among("device", deviceIds), ...among("location", locationIds)];
      if (wanted.length === 0) return [];
      return await db
        .selectFrom("whitelist_targets")
        .select(["target_type", "target_id"])
        .where((eb) =>
          eb.or(
            wanted.map(({ type, ids }) => eb.and([eb("target_type", "=", type), eb("target_id", "in", ids)])),
          ),
        )
        .distinct()
        .execute();
    },
  };
}

export type WhitelistRepository = ReturnType<typeof whitelistRepository>;
