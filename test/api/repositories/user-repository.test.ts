import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type OperatorCallbacks, userRepository } from "../../../cloud/users/user-repository.ts";
import { OP_A, OP_B } from "../../support/fixture-site.ts";
import { seedOperators } from "../../support/seed-operators.ts";
import { openTestDb, type TestDb } from "../../support/test-db.ts";

const AT = "2026-02-01T00:00:00.000Z";
const ID_1 = "11111111-0000-4000-8000-000000000001";
const ID_2 = "11111111-0000-4000-8000-000000000002";

let store: TestDb;
let users: ReturnType<typeof userRepository>;

beforeEach(async () => {
  store = await openTestDb();
  await seedOperators(store.db);
  users = userRepository(store.db);
});
afterEach(() => store.drop());

describe("userRepository: operators' callbacks", () => {
  const callbacks: OperatorCallbacks = {
    operatorId: OP_A,
    signUpUrl: "https://a.example/sign-up",
    signInUrl: "https://a.example/sign-in",
    allowPrivateAddresses: false,
    secrets: ["whsec_new", "whsec_old"],
  };

  it("stores an operator's callbacks and reads them back; another operator has none", async () => {
    expect(await users.callbacksOf(OP_A)).toBeUndefined();
    await users.insertCallbacks(callbacks, AT);
    expect(await users.callbacksOf(OP_A)).toEqual(callbacks);
    expect(await users.callbacksOf(OP_B)).toBeUndefined();
  });

  it("updates an operator's callbacks in place, secrets in their order", async () => {
    await users.insertCallbacks(callbacks, AT);
    const changed = {
      ...callbacks,
      signInUrl: "http://127.0.0.1/in",
      allowPrivateAddresses: true,
      secrets: ["whsec_b"],
    };
    await users.updateCallbacks(changed, AT);
    expect(await users.callbacksOf(OP_A)).toEqual(changed);
  });
});

describe("userRepository: external users", () => {
  it("finds a user by service_user_id and by the integrator's id, only within its operator", async () => {
    const u = { id: ID_1, operatorId: OP_A, userId: "u-1", phoneNumber: "+3725550001" };
    await users.insert(u, AT);
    expect(await users.find(OP_A, ID_1)).toEqual(u);
    expect(await users.findByUserId(OP_A, "u-1")).toEqual(u);
    expect(await users.find(OP_B, ID_1)).toBeUndefined();
    expect(await users.findByUserId(OP_B, "u-1")).toBeUndefined();
    expect(await users.find(OP_A, ID_2)).toBeUndefined();
  });

  it("insert fails on a taken id or user_id; insertUnlessTaken writes nothing then", async () => {
    const u = { id: ID_1, operatorId: OP_A, userId: "u-1", phoneNumber: null };
    await users.insert(u, AT);
    await expect(users.insert({ ...u, id: ID_2 }, AT)).rejects.toThrow();
    await expect(users.insert({ ...u, userId: "u-2" }, AT)).rejects.toThrow();
    await users.insertUnlessTaken({ ...u, id: ID_2 }, AT);
    expect(await users.findByUserId(OP_A, "u-1")).toEqual(u);
    expect(await users.find(OP_A, ID_2)).toBeUndefined();
    await users.insertUnlessTaken({ id: ID_2, operatorId: OP_B, userId: "u-1", phoneNumber: null }, AT);
    expect(await users.find(OP_B, ID_2)).toMatchObject({ userId: "u-1" });
  });

  it("idTaken looks across operators", async () => {
    expect(await users.idTaken(ID_1)).toBe(false);
    await users.insert({ id: ID_1, operatorId: OP_B, userId: "u-1", phoneNumber: null }, AT);
    expect(await users.idTaken(ID_1)).toBe(true);
  });

  it("setPhoneNumber changes the user's number, not when the user names another operator", async () => {
    const u = { id: ID_1, operatorId: OP_A, userId: "u-1", phoneNumber: null };
    await users.insert(u, AT);
    await users.setPhoneNumber({ ...u, operatorId: OP_B }, "+3725550002");
    expect(await users.find(OP_A, ID_1)).toEqual(u);
    await users.setPhoneNumber(u, "+3725550001");
    expect(await users.find(OP_A, ID_1)).toEqual({ ...u, phoneNumber: "+3725550001" });
    await users.setPhoneNumber(u, null);
    expect(await users.find(OP_A, ID_1)).toEqual(u);
  });
});
