import type { Executor } from "../store/db.ts";
import type { PriceListsTable } from "../store/tables/session-tables.ts";

export type PriceListRow = PriceListsTable;

/** What the manifest declares of a price list: every column but its id and times. */
export type PriceListFields = Omit<PriceListRow, "id" | "created_at" | "updated_at">;

export function priceListRepository(db: Executor) {
  return {
    find(id: string): Promise<PriceListRow | undefined> {
      return db.selectFrom("price_lists").selectAll().where("id", "=", id).executeTakeFirst();
    },

    /** Another operator's price list is exactly as missing as one that does not exist. */
    findForOperator(operatorId: string, id: string): Promise<PriceListRow | undefined> {
      return db
        .selectFrom("price_lists")
        .selectAll()
        .where("id", "=", id)
        .where("operator_id", "=", operatorId)
        .executeTakeFirst();
    },

    async insert(row: PriceListRow): Promise<void> {
      await db.insertInto("price_lists").values(row).execute();
    },

    async update(id: string, fields: PriceListFields, at: string): Promise<void> {
      await db
        .updateTable("price_lists")
        .set({ ...fields, updated_at: at })
        .where("id", "=", id)
        .execute();
    },
  };
}

export type PriceListRepository = ReturnType<typeof priceListRepository>;
