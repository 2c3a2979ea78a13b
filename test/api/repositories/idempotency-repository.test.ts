import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  idempotencyRepository,
  type KeyReservation,
  type KeyScope,
} from "../../../cloud/idempotency/idempotency-repository.ts";
import { openTestDb, type TestDb } from "../../support/test-db.ts";

const OP_A = "aaaaaaaa-0000-4000-8000-000000000001";
const OP_B = "bbbbbbbb-0000-4000-8000-000000000002";
const ROUTE = "/device/v1/devices/:device_id/commands";
const scope = (key: string, o: Partial<KeyScope> = {}): KeyScope => ({
  operatorId: OP_A,
  clientId: "a-admin",
  method: "POST",
  route: ROUTE,
  key,
  ...o,
});

function reservation(holder: string, expiresAt = "2026-01-16T10:00:00.000Z"): KeyReservation {
  return {
    request_hash: "hash-1",
    state: "in_progress",
    holder,
    lease_until: "2026-01-15T10:01:00.000Z",
    response_status: null,
    response_headers: null,
    response_body: null,
    created_at: "2026-01-15T10:00:00.000Z",
    expires_at: expiresAt,
  };
}

describe("idempotency repository", () => {
  let store: TestDb;
  let repo: ReturnType<typeof idempotencyRepository>;

  beforeEach(async () => {
    store = await openTestDb();
    repo = idempotencyRepository(store.db);
  });
  afterEach(() => store.drop());

  it("inserts a key once; the row is found under its whole scope only", async () => {
    expect(await repo.insertIfAbsent(scope("k1"), reservation("h1"))).toBe(true);
    expect(await repo.insertIfAbsent(scope("k1"), reservation("h2"))).toBe(false);
    expect(await repo.find(scope("k1"))).toEqual({
      operator_id: OP_A,
      client_id: "a-admin",
      method: "POST",
      route: ROUTE,
      idempotency_key: "k1",
      ...reservation("h1"),
    });
    for (const other of [
      scope("k2"),
      scope("k1", { operatorId: OP_B }),
      scope("k1", { clientId: "a-basic" }),
      scope("k1", { method: "PUT" }),
      scope("k1", { route: "/device/v1/locations" }),
    ])
      expect(await repo.find(other)).toBeUndefined();
    expect(await repo.insertIfAbsent(scope("k1", { clientId: "a-basic" }), reservation("h3"))).toBe(true);
  });

  it("takes a key over only from the holder it was read with", async () => {
    await repo.insertIfAbsent(scope("k1"), reservation("h1"));
    expect(await repo.takeOver(scope("k1"), "h0", reservation("h2"))).toBe(false);
    expect(await repo.takeOver(scope("k1"), "h1", reservation("h2"))).toBe(true);
    expect((await repo.find(scope("k1")))?.holder).toBe("h2");
    expect(await repo.takeOver(scope("k9"), "h1", reservation("h3"))).toBe(false);
  });

  it("completes a key held in progress, keeping the response; not for another holder, not twice", async () => {
    await repo.insertIfAbsent(scope("k1"), reservation("h1"));
    const response = { status: 201, headers: { location: "/x/1" }, body: '{"id":1}' };
    expect(await repo.complete(scope("k1"), "h2", response)).toBe(false);
    expect(await repo.complete(scope("k1"), "h1", response)).toBe(true);
    expect(await repo.complete(scope("k1"), "h1", response)).toBe(false);
    expect(await repo.find(scope("k1"))).toMatchObject({
      state: "completed",
      lease_until: null,
      response_status: 201,
      response_headers: JSON.stringify({ location: "/x/1" }),
      response_body: '{"id":1}',
    });
  });

  it("deletes a held key: in progress only, unless any state is asked for; never another holder's", async () => {
    await repo.insertIfAbsent(scope("k1"), reservation("h1"));
    await repo.insertIfAbsent(scope("k2"), reservation("h2"));
    await repo.complete(scope("k2"), "h2", { status: 200, headers: {}, body: "" });
    await repo.deleteHeld(scope("k1"), "h0");
    expect(await repo.find(scope("k1"))).toBeDefined();
    await repo.deleteHeld(scope("k2"), "h2");
    expect(await repo.find(scope("k2"))).toBeDefined();
    await repo.deleteHeld(scope("k1"), "h1");
    expect(await repo.find(scope("k1"))).toBeUndefined();
    await repo.deleteHeld(scope("k2"), "h2", { anyState: true });
    expect(await repo.find(scope("k2"))).toBeUndefined();
  });

  it("counts a caller's keys and finds its first expiry", async () => {
    expect(await repo.countOf(OP_A, "a-admin")).toBe(0);
    expect(await repo.firstExpiryOf(OP_A, "a-admin")).toBeUndefined();
    await repo.insertIfAbsent(scope("k1"), reservation("h1", "2026-01-16T12:00:00.000Z"));
    await repo.insertIfAbsent(
      scope("k2", { route: "/other" }),
      reservation("h2", "2026-01-16T11:00:00.000Z"),
    );
    await repo.insertIfAbsent(
      scope("k3", { clientId: "a-basic" }),
      reservation("h3", "2026-01-16T09:00:00.000Z"),
    );
    await repo.insertIfAbsent(
      scope("k4", { operatorId: OP_B }),
      reservation("h4", "2026-01-16T08:00:00.000Z"),
    );
    expect(await repo.countOf(OP_A, "a-admin")).toBe(2);
    expect(await repo.firstExpiryOf(OP_A, "a-admin")).toBe("2026-01-16T11:00:00.000Z");
    expect(await repo.countOf(OP_B, "a-admin")).toBe(1);
  });

  it("purges expired keys, all or one caller's, and says how many", async () => {
    await repo.insertIfAbsent(scope("k1"), reservation("h1", "2026-01-16T10:00:00.000Z"));
    await repo.insertIfAbsent(scope("k2"), reservation("h2", "2026-01-16T12:00:00.000Z"));
    await repo.insertIfAbsent(
      scope("k3", { clientId: "a-basic" }),
      reservation("h3", "2026-01-16T09:00:00.000Z"),
    );
    const at = "2026-01-16T10:00:00.000Z";
    expect(await repo.purgeExpired(at, { operatorId: OP_A, clientId: "a-admin" })).toBe(1);
    expect(await repo.find(scope("k3", { clientId: "a-basic" }))).toBeDefined();
    expect(await repo.purgeExpired(at)).toBe(1);
    expect(await repo.purgeExpired(at)).toBe(0);
    expect(await repo.countOf(OP_A, "a-admin")).toBe(1);
  });
});
