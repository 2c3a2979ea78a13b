import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { signUpRepository } from "../../../cloud/users/sign-up-repository.ts";
import { OP_A, OP_B } from "../../support/fixture-site.ts";
import { seedOperators } from "../../support/seed-operators.ts";
import { openTestDb, type TestDb } from "../../support/test-db.ts";

const T0 = new Date("2026-02-01T00:00:00.000Z");
const T1 = new Date("2026-02-02T00:00:00.000Z");
const BEFORE_T1 = new Date(T1.getTime() - 1);
const ID_1 = "22222222-0000-4000-8000-000000000001";
const ID_2 = "22222222-0000-4000-8000-000000000002";

let store: TestDb;
let signUps: ReturnType<typeof signUpRepository>;

beforeEach(async () => {
  store = await openTestDb();
  await seedOperators(store.db);
  signUps = signUpRepository(store.db);
});
afterEach(() => store.drop());

describe("signUpRepository", () => {
  const p = { id: ID_1, operatorId: OP_A, userId: "u-1" };

  it("finds a live sign-up by id and by user_id, only within its operator and before it expires", async () => {
    await signUps.openUnlessTaken(p, T0, T1);
    expect(await signUps.find(OP_A, ID_1, BEFORE_T1)).toEqual(p);
    expect(await signUps.findByUserId(OP_A, "u-1", BEFORE_T1)).toEqual(p);
    expect(await signUps.find(OP_B, ID_1, T0)).toBeUndefined();
    expect(await signUps.findByUserId(OP_B, "u-1", T0)).toBeUndefined();
    expect(await signUps.find(OP_A, ID_1, T1)).toBeUndefined();
    expect(await signUps.findByUserId(OP_A, "u-1", T1)).toBeUndefined();
    expect(await signUps.find(OP_A, ID_2, T0)).toBeUndefined();
  });

  it("a second sign-up of the same user_id or id writes nothing: the first stands", async () => {
    await signUps.openUnlessTaken(p, T0, T1);
    await signUps.openUnlessTaken({ ...p, id: ID_2 }, T0, T1);
    await signUps.openUnlessTaken({ ...p, userId: "u-2" }, T0, T1);
    expect(await signUps.findByUserId(OP_A, "u-1", T0)).toEqual(p);
    expect(await signUps.find(OP_A, ID_2, T0)).toBeUndefined();
    expect(await signUps.findByUserId(OP_A, "u-2", T0)).toBeUndefined();
  });

  it("dropExpired removes every operator's expired sign-ups and keeps live ones", async () => {
    await signUps.openUnlessTaken(p, T0, T1);
    const later = { id: ID_2, operatorId: OP_B, userId: "u-1" };
    await signUps.openUnlessTaken(later, T0, new Date(T1.getTime() + 1));
    await signUps.dropExpired(T1);
    // A fresh sign-up of u-1 at operator A now stands: the expired one is gone.
    await signUps.openUnlessTaken(
      { ...p, id: "22222222-0000-4000-8000-000000000003" },
      T1,
      new Date("2026-03-01T00:00:00Z"),
    );
    expect(await signUps.findByUserId(OP_A, "u-1", T1)).toMatchObject({
      id: "22222222-0000-4000-8000-000000000003",
    });
    expect(await signUps.find(OP_B, ID_2, T1)).toEqual(later);
  });

  it("drop removes the sign-up, not when named under another operator", async () => {
    await signUps.openUnlessTaken(p, T0, T1);
    await signUps.drop({ ...p, operatorId: OP_B });
    expect(await signUps.find(OP_A, ID_1, T0)).toEqual(p);
    await signUps.drop(p);
    expect(await signUps.find(OP_A, ID_1, T0)).toBeUndefined();
  });
});
