import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type Staff, staffRepository } from "../../../cloud/staff/staff-repository.ts";
import { OP_A, OP_B } from "../../support/fixture-site.ts";
import { seedOperators } from "../../support/seed-operators.ts";
import { openTestDb, type TestDb } from "../../support/test-db.ts";

const T0 = "2026-02-01T00:00:00.000Z";
const T1 = "2026-02-02T00:00:00.000Z";

let store: TestDb;
let staff: ReturnType<typeof staffRepository>;

const member = (id: string, over: Partial<Staff> = {}): Staff => ({
  id,
  operatorId: OP_A,
  email: `${id}@example.com`,
  passwordHash: `scrypt$salt-${id}$hash`,
  role: "viewer",
  disabledAt: null,
  createdAt: T0,
  updatedAt: T0,
  ...over,
});

beforeEach(async () => {
  store = await openTestDb();
  await seedOperators(store.db);
  staff = staffRepository(store.db);
});
afterEach(() => store.drop());

describe("staffRepository", () => {
  it("stores a staff member as given and finds it by id and by email whatever its case", async () => {
    const ann = member("ann", { email: "Ann.Smith@Example.com", role: "operator" });
    await staff.insert(ann);
    expect(await staff.find("ann")).toEqual(ann);
    expect(await staff.findByEmail("ann.smith@example.com")).toEqual(ann);
    expect(await staff.findByEmail("ANN.SMITH@EXAMPLE.COM")).toEqual(ann);
    expect(await staff.findByEmail("bob@example.com")).toBeUndefined();
    expect(await staff.find("nobody")).toBeUndefined();
  });

  it("refuses a second staff member with the same email in another case", async () => {
    await staff.insert(member("ann", { email: "ann@example.com" }));
    await expect(
      staff.insert(member("ann2", { email: "ANN@example.com", operatorId: OP_B })),
    ).rejects.toThrow();
    expect((await staff.list()).map((s) => s.id)).toEqual(["ann"]);
  });

  it("keeps a superadmin without an operator", async () => {
    const root = member("root", { operatorId: null, role: "admin" });
    await staff.insert(root);
    expect(await staff.find("root")).toEqual(root);
  });

  it("lists one operator's staff, or everyone's, by email whatever its case", async () => {
    await staff.insert(member("c", { email: "carol@example.com" }));
    await staff.insert(member("a", { email: "Alice@example.com" }));
    await staff.insert(member("b", { email: "bob@example.com", operatorId: OP_B }));
    await staff.insert(member("r", { email: "root@example.com", operatorId: null }));
    expect((await staff.list(OP_A)).map((s) => s.id)).toEqual(["a", "c"]);
    expect((await staff.list(OP_B)).map((s) => s.id)).toEqual(["b"]);
    expect((await staff.list()).map((s) => s.id)).toEqual(["a", "b", "c", "r"]);
  });

  it("changes role and operator, password hash, and disabled state, each with its update time", async () => {
    await staff.insert(member("ann"));
    await staff.setScope("ann", { role: "admin", operatorId: null }, T1);
    expect(await staff.find("ann")).toEqual(
      member("ann", { role: "admin", operatorId: null, updatedAt: T1 }),
    );
    await staff.setPasswordHash("ann", "scrypt$new$hash", T1);
    expect((await staff.find("ann"))?.passwordHash).toBe("scrypt$new$hash");
    await staff.setDisabled("ann", T1, T1);
    expect((await staff.find("ann"))?.disabledAt).toBe(T1);
    await staff.setDisabled("ann", null, T1);
    expect((await staff.find("ann"))?.disabledAt).toBeNull();
  });

  it("tells whether an operator exists", async () => {
    expect(await staff.operatorExists(OP_A)).toBe(true);
    expect(await staff.operatorExists("cccccccc-0000-4000-8000-000000000003")).toBe(false);
  });
});
