import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  type RefreshTokenRecord,
  refreshTokenRepository,
} from "../../../cloud/users/refresh-token-repository.ts";
import { userRepository } from "../../../cloud/users/user-repository.ts";
import { OP_A, OP_B } from "../../support/fixture-site.ts";
import { seedOperators } from "../../support/seed-operators.ts";
import { openTestDb, type TestDb } from "../../support/test-db.ts";

const T0 = new Date("2026-02-01T00:00:00.000Z");
const T1 = new Date("2026-02-02T00:00:00.000Z");
const RIDER = "33333333-0000-4000-8000-000000000001";
const OTHER = "33333333-0000-4000-8000-000000000002";

let store: TestDb;
let tokens: ReturnType<typeof refreshTokenRepository>;

const token = (id: string, over: Partial<RefreshTokenRecord> = {}): RefreshTokenRecord => ({
  id,
  operatorId: OP_A,
  userId: RIDER,
  tokenHash: `hash-${id}`,
  createdAt: T0.toISOString(),
  expiresAt: T1.toISOString(),
  lastUsedAt: null,
  revokedAt: null,
  ...over,
});

beforeEach(async () => {
  store = await openTestDb();
  await seedOperators(store.db);
  const users = userRepository(store.db);
  await users.insert({ id: RIDER, operatorId: OP_A, userId: "rider", phoneNumber: null }, T0.toISOString());
  await users.insert({ id: OTHER, operatorId: OP_B, userId: "other", phoneNumber: null }, T0.toISOString());
  tokens = refreshTokenRepository(store.db);
});
afterEach(() => store.drop());

describe("refreshTokenRepository", () => {
  it("ofRider lists the rider's tokens newest first, ties by id descending, only theirs", async () => {
    await tokens.insert(token("t-a"));
    await tokens.insert(token("t-c"));
    await tokens.insert(token("t-b", { createdAt: "2026-02-01T00:00:01.000Z" }));
    await tokens.insert(token("t-o", { operatorId: OP_B, userId: OTHER }));
    expect((await tokens.ofRider(RIDER)).map((t) => t.id)).toEqual(["t-b", "t-c", "t-a"]);
    expect(await tokens.ofRider(OTHER)).toEqual([token("t-o", { operatorId: OP_B, userId: OTHER })]);
    expect(await tokens.ofRider("33333333-0000-4000-8000-000000000009")).toEqual([]);
  });

  it("findLive finds a live token of the rider by hash, with its rider; not another rider's, operator's, or an expired or revoked one", async () => {
    await tokens.insert(token("t-1"));
    const live = { tokenHash: "hash-t-1", serviceUserId: RIDER };
    expect(await tokens.findLive(live, T0)).toEqual({ id: "t-1", userId: RIDER, operatorId: OP_A });
    expect(await tokens.findLive({ ...live, operatorId: OP_A }, T0)).toMatchObject({ id: "t-1" });
    expect(await tokens.findLive({ ...live, operatorId: OP_B }, T0)).toBeUndefined();
    expect(await tokens.findLive({ ...live, serviceUserId: OTHER }, T0)).toBeUndefined();
    expect(await tokens.findLive({ ...live, tokenHash: "hash-x" }, T0)).toBeUndefined();
    expect(await tokens.findLive(live, T1)).toBeUndefined();
    await tokens.revokeAllOf({ operatorId: OP_A, serviceUserId: RIDER }, T0);
    expect(await tokens.findLive(live, T0)).toBeUndefined();
  });

  it("findLive ignores a token whose operator is not its rider's", async () => {
    await tokens.insert(token("t-x", { operatorId: OP_B }));
    expect(await tokens.findLive({ tokenHash: "hash-t-x", serviceUserId: RIDER }, T0)).toBeUndefined();
  });

  it("markUsed records the time of use", async () => {
    await tokens.insert(token("t-1"));
    await tokens.markUsed("t-1", T0);
    expect((await tokens.ofRider(RIDER))[0]?.lastUsedAt).toBe(T0.toISOString());
  });

  it("revokeAllOf revokes the rider's unrevoked tokens at its operator and counts them", async () => {
    await tokens.insert(token("t-1"));
    await tokens.insert(token("t-2", { revokedAt: T0.toISOString() }));
    await tokens.insert(token("t-o", { operatorId: OP_B, userId: OTHER }));
    expect(await tokens.revokeAllOf({ operatorId: OP_B, serviceUserId: RIDER }, T1)).toBe(0);
    expect(await tokens.revokeAllOf({ operatorId: OP_A, serviceUserId: RIDER }, T1)).toBe(1);
    const after = await tokens.ofRider(RIDER);
    expect(after.map((t) => [t.id, t.revokedAt])).toEqual([
      ["t-2", T0.toISOString()],
      ["t-1", T1.toISOString()],
    ]);
    expect((await tokens.ofRider(OTHER))[0]?.revokedAt).toBeNull();
  });

  it("dropDeadAndSurplusOf removes the rider's revoked and expired tokens, and live ones beyond the newest few", async () => {
    await tokens.insert(token("t-live", { expiresAt: "2026-03-01T00:00:00.000Z" }));
    await tokens.insert(token("t-expired"));
    await tokens.insert(
      token("t-revoked", { expiresAt: "2026-03-01T00:00:00.000Z", revokedAt: T0.toISOString() }),
    );
    await tokens.insert(token("t-o", { operatorId: OP_B, userId: OTHER }));
    await tokens.dropDeadAndSurplusOf(RIDER, T1, 2);
    expect((await tokens.ofRider(RIDER)).map((t) => t.id)).toEqual(["t-live"]);
    expect(await tokens.ofRider(OTHER)).toHaveLength(1);
    // Newest first by creation, ties by id descending: of five live tokens the newest three stay (t-b
    // before t-a, created at the same moment).
    const live = { expiresAt: "2026-03-01T00:00:00.000Z" };
    await tokens.insert(token("t-b", { ...live, createdAt: "2026-01-02T00:00:00.000Z" }));
    await tokens.insert(token("t-a", { ...live, createdAt: "2026-01-02T00:00:00.000Z" }));
    await tokens.insert(token("t-c", { ...live, createdAt: "2026-01-03T00:00:00.000Z" }));
    await tokens.insert(token("t-old", { ...live, createdAt: "2025-12-01T00:00:00.000Z" }));
    await tokens.dropDeadAndSurplusOf(RIDER, T1, 3);
    expect((await tokens.ofRider(RIDER)).map((t) => t.id)).toEqual(["t-live", "t-c", "t-b"]);
    await tokens.dropDeadAndSurplusOf(RIDER, T1, 3);
    expect(await tokens.ofRider(RIDER)).toHaveLength(3);
    expect(await tokens.ofRider(OTHER)).toHaveLength(1);
  });
});
