import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { subjectRepository } from "../../../cloud/site-events/subject-repository.ts";
import { fx, OP_A, OP_B } from "../../support/fixture-site.ts";
import type { TestDb } from "../../support/test-db.ts";
import { openFixtureStore } from "./fixture-store.ts";

describe("subject repository", () => {
  let store: TestDb;
  beforeAll(async () => {
    store = await openFixtureStore();
  });
  afterAll(() => store.drop());
  const repo = () => subjectRepository(store.db);

  it("places a gateway at its operator and location, and knows no unknown one", async () => {
    expect(await repo().gatewayPlace("gw-a2")).toEqual({ operator_id: OP_A, location_id: fx.location("D1") });
    expect(await repo().gatewayPlace("gw-b1")).toEqual({ operator_id: OP_B, location_id: fx.location("B1") });
    expect(await repo().gatewayPlace("gw-none")).toBeUndefined();
  });

  it("names a device by its operator, location, alias and type, and knows no unknown one", async () => {
    expect(await repo().device(fx.device("H1", "door"))).toEqual({
      operator_id: OP_A,
      location_id: fx.location("H1"),
      alias: "door",
      type: "BIKE_HOUSE_DOOR",
    });
    expect(await repo().device(fx.device("B1", "1"))).toMatchObject({ operator_id: OP_B, type: "LOCKER" });
    expect(await repo().device("00000000-0000-4000-8000-000000000000")).toBeUndefined();
  });
});
