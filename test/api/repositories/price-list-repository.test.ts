import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type PriceListRow, priceListRepository } from "../../../cloud/sessions/price-list-repository.ts";
import { fx, OP_A, OP_B } from "../../support/fixture-site.ts";
import type { TestDb } from "../../support/test-db.ts";
import { openFixtureStore } from "./fixture-store.ts";

const T0 = "2026-01-15T10:00:00.000Z";
const ID = "11111111-0000-4000-8000-000000000001";

const row: PriceListRow = {
  id: ID,
  operator_id: OP_B,
  code: "night",
  name: "Night",
  currency: "EUR",
  free_minutes: 15,
  period_minutes: 30,
  price_per_period: "0.50",
  max_fee: null,
  created_at: T0,
  updated_at: T0,
};

describe("price list repository", () => {
  let store: TestDb;
  beforeAll(async () => {
    store = await openFixtureStore();
  });
  afterAll(() => store.drop());
  const repo = () => priceListRepository(store.db);

  it("finds a declared price list, and nothing for an unknown id", async () => {
    expect(await repo().find(fx.priceList("standard"))).toMatchObject({
      operator_id: OP_A,
      code: "standard",
      currency: "EUR",
      price_per_period: "2.00",
      max_fee: "10.00",
    });
    expect(await repo().find(ID)).toBeUndefined();
  });

  it("inserts a price list, found for its operator only", async () => {
    await repo().insert(row);
    expect(await repo().find(ID)).toEqual(row);
    expect(await repo().findForOperator(OP_B, ID)).toEqual(row);
    expect(await repo().findForOperator(OP_A, ID)).toBeUndefined();
  });

  it("updates a price list's fields and time, keeping its id and creation", async () => {
    const { id: _, created_at: __, updated_at: ___, ...fields } = row;
    await repo().update(ID, { ...fields, name: "Late night", max_fee: "5.00" }, "2026-01-16T10:00:00.000Z");
    expect(await repo().find(ID)).toEqual({
      ...row,
      name: "Late night",
      max_fee: "5.00",
      updated_at: "2026-01-16T10:00:00.000Z",
    });
    expect((await repo().find(fx.priceList("standard")))?.name).toBe("Standard");
  });
});
