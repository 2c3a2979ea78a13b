import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { applyManifest } from "../../../cloud/manifest/apply-manifest.ts";
import { SiteManifest } from "../../../cloud/manifest/manifest-schema.ts";
import type { WhitelistEntitiesTable } from "../../../cloud/store/tables/whitelist-tables.ts";
import { whitelistRepository } from "../../../cloud/whitelists/whitelist-repository.ts";
import { fixtureSecretHash } from "../../support/cloud-harness.ts";
import { FakeClock } from "../../support/fake-clock.ts";
import { fixtureManifest, fx, OP_A, OP_B } from "../../support/fixture-site.ts";
import { openTestDb, type TestDb } from "../../support/test-db.ts";

/** The whitelist repository against both stores, on the fixture site (its locations and devices). */

const TS = "2026-01-15T10:00:00.000Z";
const LATER = "2026-01-15T11:00:00.000Z";
const A1 = "a1a1a1a1-0000-4000-8000-000000000001";
const A2 = "a1a1a1a1-0000-4000-8000-000000000002";
const B1 = "b1b1b1b1-0000-4000-8000-000000000001";
const MISSING = "c1c1c1c1-0000-4000-8000-000000000009";

const L1 = fx.location("L1");
const H1 = fx.location("H1");
const L1_LOCKER = fx.device("L1", "1");
const H1_DOOR = fx.device("H1", "door");
const B1_LOCKER = fx.device("B1", "1");

let store: TestDb;
let repo: ReturnType<typeof whitelistRepository>;

const list = (id: string, operatorId: string, name: string) => ({
  id,
  operator_id: operatorId,
  name,
  description: "",
  created_at: TS,
  updated_at: TS,
});

const card = (whitelistId: string, cardId: string, o: Partial<WhitelistEntitiesTable> = {}) => ({
  whitelist_id: whitelistId,
  card_id: cardId,
  status: "ACTIVE" as const,
  expires_at: null,
  is_master_key: 0,
  comment: "",
  created_at: TS,
  updated_at: TS,
  ...o,
});

beforeEach(async () => {
  store = await openTestDb();
  const clock = new FakeClock(TS);
  await applyManifest(store.db, SiteManifest.parse(fixtureManifest(await fixtureSecretHash())), clock);
  repo = whitelistRepository(store.db);
  // Named so that name order differs from id order.
  await repo.insert(list(A2, OP_A, "Alpha"));
  await repo.insert(list(A1, OP_A, "Beta"));
  await repo.insert(list(B1, OP_B, "Alpha"));
});
afterEach(() => store.drop());

describe("whitelists", () => {
  it("finds one by id, and for its operator only", async () => {
    expect(await repo.find(A1)).toEqual(list(A1, OP_A, "Beta"));
    expect(await repo.find(MISSING)).toBeUndefined();
    expect(await repo.findForOperator(OP_A, A1)).toEqual(list(A1, OP_A, "Beta"));
    expect(await repo.findForOperator(OP_B, A1)).toBeUndefined();
  });

  it("lists an operator's own by name, then id", async () => {
    expect((await repo.listForOperator(OP_A)).map((l) => l.id)).toEqual([A2, A1]);
    expect((await repo.listForOperator(OP_B)).map((l) => l.id)).toEqual([B1]);
    expect(await repo.listForOperator("no-such-operator")).toEqual([]);
  });

  it("describes one anew", async () => {
    await repo.describe(A1, { name: "Gamma", description: "staff", updated_at: LATER });
    expect(await repo.find(A1)).toEqual({
      ...list(A1, OP_A, "Gamma"),
      description: "staff",
      updated_at: LATER,
    });
  });

  it("lists the operator's lists targeting a location or one of its devices", async () => {
    expect(await repo.atLocation(OP_A, L1)).toEqual([]);
    await repo.insertTarget({ whitelistId: A1, type: "location", id: L1 }, 1, TS);
    await repo.insertTarget({ whitelistId: A2, type: "device", id: L1_LOCKER }, 1, TS);
    await repo.insertTarget({ whitelistId: A2, type: "location", id: L1 }, 1, TS);
    expect((await repo.atLocation(OP_A, L1)).map((l) => l.id)).toEqual([A2, A1]);
    expect(await repo.atLocation(OP_B, L1)).toEqual([]);
    expect(await repo.atLocation(OP_A, H1)).toEqual([]);
  });
});

describe("cards", () => {
  it("inserts, finds, updates and lists a list's cards by card id", async () => {
    await repo.insertEntity(card(A1, "0b0b"));
    await repo.insertEntity(card(A1, "0a0a", { is_master_key: 1, expires_at: LATER }));
    await repo.insertEntity(card(A2, "0c0c"));
    expect(await repo.findEntity(A1, "0a0a")).toEqual(
      card(A1, "0a0a", { is_master_key: 1, expires_at: LATER }),
    );
    expect(await repo.findEntity(A2, "0a0a")).toBeUndefined();
    const fields = {
      status: "INACTIVE" as const,
      expires_at: null,
      is_master_key: 0,
      comment: "lost",
      updated_at: LATER,
    };
    await repo.updateEntity(A1, "0b0b", fields);
    expect((await repo.entities(A1)).map((e) => e.card_id)).toEqual(["0a0a", "0b0b"]);
    expect(await repo.findEntity(A1, "0b0b")).toEqual({ ...card(A1, "0b0b"), ...fields });
    expect(await repo.entities(MISSING)).toEqual([]);
  });

  it("puts a card's whole record, keeping its created_at on a replace", async () => {
    const fields = {
      status: "ACTIVE" as const,
      expires_at: null,
      is_master_key: 0,
      comment: "",
      updated_at: TS,
    };
    await repo.putEntity(A1, "0a0a", fields, TS);
    expect(await repo.findEntity(A1, "0a0a")).toEqual(card(A1, "0a0a"));
    const replaced = { ...fields, status: "INACTIVE" as const, comment: "again", updated_at: LATER };
    await repo.putEntity(A1, "0a0a", replaced, LATER);
    expect(await repo.findEntity(A1, "0a0a")).toEqual({ ...card(A1, "0a0a"), ...replaced, created_at: TS });
  });

  it("removes a card, saying whether it was there", async () => {
    await repo.insertEntity(card(A1, "0a0a"));
    await repo.insertEntity(card(A2, "0a0a"));
    expect(await repo.removeEntity(A1, "0a0a")).toBe(true);
    expect(await repo.removeEntity(A1, "0a0a")).toBe(false);
    expect(await repo.findEntity(A2, "0a0a")).toBeDefined();
  });
});

describe("targets", () => {
  const door = { whitelistId: A1, type: "device" as const, id: H1_DOOR };
  const house = { whitelistId: A1, type: "location" as const, id: H1 };

  it("inserts, finds, lists by type then id (or of one type), sets keys_only and removes", async () => {
    await repo.insertTarget(door, 1, TS);
    await repo.insertTarget(house, 0, TS);
    await repo.insertTarget({ ...door, id: L1_LOCKER }, 1, TS);
    const row = (key: typeof door | typeof house, keys_only: number) => ({
      whitelist_id: key.whitelistId,
      target_type: key.type,
      target_id: key.id,
      keys_only,
      created_at: TS,
    });
    expect(await repo.findTarget(house)).toEqual(row(house, 0));
    expect(await repo.findTarget({ ...house, whitelistId: A2 })).toBeUndefined();
    expect((await repo.targets(A1)).map((t) => [t.target_type, t.target_id])).toEqual([
      ...[H1_DOOR, L1_LOCKER].sort().map((id) => ["device", id]),
      ["location", H1],
    ]);
    expect(await repo.targets(A1, "location")).toEqual([row(house, 0)]);
    expect(await repo.targets(A2)).toEqual([]);
    await repo.setKeysOnly(house, 1);
    expect(await repo.findTarget(house)).toEqual(row(house, 1));
    expect(await repo.removeTarget(door)).toBe(true);
    expect(await repo.removeTarget(door)).toBe(false);
    expect(await repo.findTarget(door)).toBeUndefined();
  });

  it("tells the operator's own devices and locations from another's and missing ones", async () => {
    expect(await repo.isOperatorsTarget(OP_A, "device", H1_DOOR)).toBe(true);
    expect(await repo.isOperatorsTarget(OP_A, "location", H1)).toBe(true);
    expect(await repo.isOperatorsTarget(OP_A, "device", B1_LOCKER)).toBe(false);
    expect(await repo.isOperatorsTarget(OP_B, "location", H1)).toBe(false);
    expect(await repo.isOperatorsTarget(OP_A, "location", H1_DOOR)).toBe(false);
  });

  it("finds a device by its alias at a location", async () => {
    expect(await repo.deviceIdByAlias(H1, "door")).toBe(H1_DOOR);
    expect(await repo.deviceIdByAlias(L1, "door")).toBeUndefined();
  });

  it("counts the lists targeting a device directly, not through its location", async () => {
    expect(
      await store.db
        .transaction()
        .execute((trx) => whitelistRepository(trx).holdDeviceCountingLists(H1_DOOR)),
    ).toBe(0);
    await repo.insertTarget(door, 1, TS);
    await repo.insertTarget({ ...door, whitelistId: A2 }, 0, TS);
    await repo.insertTarget(house, 1, TS);
    expect(await repo.holdDeviceCountingLists(H1_DOOR)).toBe(2);
  });

  it("pairs locations with the lists targeting them or their devices", async () => {
    expect(await repo.allowlistsAt([])).toEqual([]);
    await repo.insertTarget(house, 1, TS);
    await repo.insertTarget(door, 1, TS);
    await repo.insertTarget({ whitelistId: A2, type: "device", id: L1_LOCKER }, 1, TS);
    const pairs = (await repo.allowlistsAt([H1, L1])).map((p) => `${p.location_id} ${p.whitelist_id}`);
    expect(pairs.sort()).toEqual([`${H1} ${A1}`, `${H1} ${A1}`, `${L1} ${A2}`].sort());
    expect(await repo.allowlistsAt([fx.location("D1")])).toEqual([]);
  });

  it("says which of some devices and locations are targeted, once each", async () => {
    expect(await repo.targetedAmong([], [])).toEqual([]);
    await repo.insertTarget(door, 1, TS);
    await repo.insertTarget({ ...door, whitelistId: A2 }, 1, TS);
    await repo.insertTarget({ whitelistId: A2, type: "location", id: L1 }, 1, TS);
    const found = await repo.targetedAmong([H1_DOOR, L1_LOCKER], [L1, H1]);
    expect(found.map((t) => `${t.target_type} ${t.target_id}`).sort()).toEqual(
      [`device ${H1_DOOR}`, `location ${L1}`].sort(),
    );
    expect(await repo.targetedAmong([L1_LOCKER], [])).toEqual([]);
  });
});
