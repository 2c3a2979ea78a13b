import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { staffRepository } from "../../../cloud/staff/staff-repository.ts";
import {
  type StaffSessionRecord,
  staffSessionRepository,
} from "../../../cloud/staff/staff-session-repository.ts";
import { OP_A } from "../../support/fixture-site.ts";
import { seedOperators } from "../../support/seed-operators.ts";
import { openTestDb, type TestDb } from "../../support/test-db.ts";

const T0 = "2026-02-01T00:00:00.000Z";
const T1 = "2026-02-01T00:10:00.000Z";

let store: TestDb;
let sessions: ReturnType<typeof staffSessionRepository>;

const session = (id: string, over: Partial<StaffSessionRecord> = {}): StaffSessionRecord => ({
  id,
  staffId: "ann",
  tokenHash: `hash-${id}`,
  csrfToken: `csrf-${id}`,
  createdAt: T0,
  lastSeenAt: T0,
  revokedAt: null,
  ...over,
});

beforeEach(async () => {
  store = await openTestDb();
  await seedOperators(store.db);
  const staff = staffRepository(store.db);
  for (const id of ["ann", "bob"])
    await staff.insert({
      id,
      operatorId: OP_A,
      email: `${id}@example.com`,
      passwordHash: "scrypt$x$y",
      role: "viewer",
      disabledAt: null,
      createdAt: T0,
      updatedAt: T0,
    });
  sessions = staffSessionRepository(store.db);
});
afterEach(() => store.drop());

describe("staffSessionRepository", () => {
  it("finds an unrevoked session by its token hash, not another's or a revoked one", async () => {
    await sessions.insert(session("s1"));
    expect(await sessions.findUnrevoked("hash-s1")).toEqual(session("s1"));
    expect(await sessions.findUnrevoked("hash-s2")).toBeUndefined();
    await sessions.revoke("s1", T1);
    expect(await sessions.findUnrevoked("hash-s1")).toBeUndefined();
    expect(await sessions.ofStaff("ann")).toEqual([session("s1", { revokedAt: T1 })]);
  });

  it("refuses a second session with the same token hash", async () => {
    await sessions.insert(session("s1"));
    await expect(sessions.insert(session("s2", { tokenHash: "hash-s1" }))).rejects.toThrow();
  });

  it("touch moves the last use; revoking twice keeps the first time", async () => {
    await sessions.insert(session("s1"));
    await sessions.touch("s1", T1);
    expect((await sessions.findUnrevoked("hash-s1"))?.lastSeenAt).toBe(T1);
    await sessions.revoke("s1", T0);
    await sessions.revoke("s1", T1);
    expect((await sessions.ofStaff("ann"))[0]?.revokedAt).toBe(T0);
  });

  it("revokeAllOf revokes the live sessions of one staff member only, and counts them", async () => {
    await sessions.insert(session("a1"));
    await sessions.insert(session("a2", { createdAt: T1 }));
    await sessions.insert(session("a3", { revokedAt: T0 }));
    await sessions.insert(session("b1", { staffId: "bob" }));
    expect(await sessions.revokeAllOf("ann", T1)).toBe(2);
    expect((await sessions.ofStaff("ann")).map((s) => [s.id, s.revokedAt])).toEqual([
      ["a1", T1],
      ["a3", T0],
      ["a2", T1],
    ]);
    expect(await sessions.findUnrevoked("hash-b1")).toEqual(session("b1", { staffId: "bob" }));
  });
});
