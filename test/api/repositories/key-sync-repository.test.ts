import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { applyStatus } from "../../../cloud/gateway-link/gateway-reports.ts";
import { keySyncRepository } from "../../../cloud/key-sync/key-sync-repository.ts";
import { applyManifest } from "../../../cloud/manifest/apply-manifest.ts";
import { SiteManifest } from "../../../cloud/manifest/manifest-schema.ts";
import { whitelistRepository } from "../../../cloud/whitelists/whitelist-repository.ts";
import type { Grant } from "../../../shared/wire/messages.ts";
import { fixtureSecretHash } from "../../support/cloud-harness.ts";
import { FakeClock } from "../../support/fake-clock.ts";
import { fixtureManifest, fx, OP_A } from "../../support/fixture-site.ts";
import { openTestDb, type TestDb } from "../../support/test-db.ts";

/** The key-sync repository against both stores, on the fixture site (its gateways, locations, devices). */

const TS = "2026-01-15T10:00:00.000Z";
const LATER = "2026-01-15T11:00:00.000Z";
const WL = "d1d1d1d1-0000-4000-8000-000000000001";
const OTHER = "d1d1d1d1-0000-4000-8000-000000000002";
const L1 = fx.location("L1");
const H1 = fx.location("H1");
const L1_LOCKER = fx.device("L1", "1");

let store: TestDb;
let keys: ReturnType<typeof keySyncRepository>;

const grant = (card_id: string, whitelist_id = WL): Grant => ({
  card_id,
  whitelist_id,
  status: "ACTIVE",
  expires_at: null,
  is_master_key: false,
  location_ids: [L1],
  device_ids: [],
});

beforeEach(async () => {
  store = await openTestDb();
  await applyManifest(
    store.db,
    SiteManifest.parse(fixtureManifest(await fixtureSecretHash())),
    new FakeClock(TS),
  );
  keys = keySyncRepository(store.db);
});
afterEach(() => store.drop());

describe("versions", () => {
  it("starts a gateway at version 0, never confirmed, and bumps it by one a call", async () => {
    expect(await keys.versionsOf("gw-a1")).toEqual({ version: 0, confirmed: null });
    expect(await keys.nextVersion("gw-a1", TS)).toBe(1);
    expect(await keys.nextVersion("gw-a1", LATER)).toBe(2);
    expect(await keys.versionsOf("gw-a1")).toEqual({ version: 2, confirmed: null });
    expect(await keys.versionsOf("gw-a3")).toEqual({ version: 0, confirmed: null });
  });

  it("records the version a gateway holds, with or without a view yet", async () => {
    await keys.confirm("gw-a1", 7, TS);
    expect(await keys.versionsOf("gw-a1")).toEqual({ version: 0, confirmed: 7 });
    await keys.nextVersion("gw-a1", TS);
    await keys.confirm("gw-a1", 1, LATER);
    expect(await keys.versionsOf("gw-a1")).toEqual({ version: 1, confirmed: 1 });
  });

  it("lists the online gateways only, with their versions (null without a view)", async () => {
    expect(await keys.onlineVersions()).toEqual([]);
    for (const gateway_id of ["gw-a1", "gw-a3"])
      await applyStatus(store.db, { gateway_id, online: true, at: TS }, new Date(TS));
    await keys.nextVersion("gw-a1", TS);
    await keys.confirm("gw-a1", 0, TS);
    await keys.nextVersion("gw-b1", TS);
    const online = await keys.onlineVersions();
    expect(online.sort((a, b) => a.id.localeCompare(b.id))).toEqual([
      { id: "gw-a1", version: 1, confirmed: 0 },
      { id: "gw-a3", version: null, confirmed: null },
    ]);
  });
});

describe("change sets", () => {
  it("reads those after a base up to a version, in order, leaving out dropped ones", async () => {
    const set = (card: string) => ({ upserts: [grant(card)], removals: [] });
    for (const [v, card] of [
      [3, "0c"],
      [1, "0a"],
      [2, "0b"],
    ] as const)
      await keys.recordChanges("gw-a1", v, set(card), TS);
    await keys.recordChanges(
      "gw-a3",
      2,
      { upserts: [], removals: [{ card_id: "0f", whitelist_id: WL }] },
      TS,
    );
    expect(await keys.changesBetween("gw-a1", 0, 3)).toEqual([
      { version: 1, changes: set("0a") },
      { version: 2, changes: set("0b") },
      { version: 3, changes: set("0c") },
    ]);
    expect((await keys.changesBetween("gw-a1", 1, 2)).map((c) => c.version)).toEqual([2]);
    await keys.dropChangesUpTo("gw-a1", 2);
    expect((await keys.changesBetween("gw-a1", 0, 3)).map((c) => c.version)).toEqual([3]);
    expect((await keys.changesBetween("gw-a3", 0, 3)).map((c) => c.version)).toEqual([2]);
  });
});

describe("views", () => {
  it("puts, replaces and drops grants, and reads a view by whitelist, then card", async () => {
    expect(await keys.grantsOf("gw-a1")).toEqual([]);
    await keys.putGrants("gw-a1", [grant("0b", OTHER), grant("0b"), grant("0a")]);
    await keys.putGrants("gw-a3", [grant("0a")]);
    expect((await keys.grantsOf("gw-a1")).map((g) => [g.whitelist_id, g.card_id])).toEqual([
      [WL, "0a"],
      [WL, "0b"],
      [OTHER, "0b"],
    ]);
    const inactive = { ...grant("0a"), status: "INACTIVE" as const };
    await keys.putGrants("gw-a1", [inactive]);
    expect(await keys.heldGrantJson("gw-a1", WL, ["0a"])).toEqual(
      new Map([["0a", JSON.stringify(inactive)]]),
    );
    expect([...(await keys.heldGrantJson("gw-a1", WL, null)).keys()].sort()).toEqual(["0a", "0b"]);
    expect(await keys.heldGrantJson("gw-a1", WL, ["ff"])).toEqual(new Map());
    expect((await keys.holdersOf(WL)).sort()).toEqual(["gw-a1", "gw-a3"]);
    await keys.dropGrants("gw-a1", WL, ["0a", "0b"]);
    expect((await keys.grantsOf("gw-a1")).map((g) => [g.whitelist_id, g.card_id])).toEqual([[OTHER, "0b"]]);
    expect(await keys.grantsOf("gw-a3")).toEqual([grant("0a")]);
    expect(await keys.holdersOf("ffffffff-0000-4000-8000-000000000000")).toEqual([]);
  });

  it("puts and drops more grants than one statement carries", async () => {
    const many = Array.from({ length: 1_234 }, (_, i) => grant(i.toString(16).padStart(4, "0")));
    await keys.putGrants("gw-a1", many);
    expect(await keys.grantsOf("gw-a1")).toHaveLength(1_234);
    expect(
      (
        await keys.heldGrantJson(
          "gw-a1",
          WL,
          many.map((g) => g.card_id),
        )
      ).size,
    ).toBe(1_234);
    await keys.dropGrants(
      "gw-a1",
      WL,
      many.slice(0, 1_200).map((g) => g.card_id),
    );
    expect(await keys.grantsOf("gw-a1")).toHaveLength(34);
  });
});

describe("whitelist rows", () => {
  beforeEach(async () => {
    const lists = whitelistRepository(store.db);
    for (const id of [WL, OTHER])
      await lists.insert({
        id,
        operator_id: OP_A,
        name: id,
        description: "",
        created_at: TS,
        updated_at: TS,
      });
    const card = (whitelist_id: string, card_id: string, is_master_key = 0) => ({
      whitelist_id,
      card_id,
      status: "ACTIVE" as const,
      expires_at: null,
      is_master_key,
      comment: "not carried",
      created_at: TS,
      updated_at: TS,
    });
    await lists.insertEntity(card(WL, "0a"));
    await lists.insertEntity(card(WL, "0b", 1));
    await lists.insertEntity(card(OTHER, "0a"));
  });

  it("reads a list's cards (these, or all) and a card in every list, with what a grant carries", async () => {
    const of = (whitelist_id: string, card_id: string, is_master_key = 0) => ({
      card_id,
      whitelist_id,
      status: "ACTIVE",
      expires_at: null,
      is_master_key,
    });
    const byCard = (a: { card_id: string }, b: { card_id: string }) => a.card_id.localeCompare(b.card_id);
    expect((await keys.entitiesOf(WL, null)).sort(byCard)).toEqual([of(WL, "0a"), of(WL, "0b", 1)]);
    expect(await keys.entitiesOf(WL, ["0b", "ff"])).toEqual([of(WL, "0b", 1)]);
    expect(await keys.entitiesOf(WL, [])).toEqual([]);
    const both = await keys.entitiesOfCard("0a");
    expect(both.map((e) => e.whitelist_id).sort()).toEqual([WL, OTHER].sort());
    expect(await keys.entitiesOfCard("ff")).toEqual([]);
  });

  it("reaches a location's gateway and a device's, keys_only targets only unless asked", async () => {
    const lists = whitelistRepository(store.db);
    await lists.insertTarget({ whitelistId: WL, type: "location", id: L1 }, 1, TS);
    await lists.insertTarget({ whitelistId: WL, type: "location", id: H1 }, 0, TS);
    await lists.insertTarget({ whitelistId: WL, type: "device", id: L1_LOCKER }, 0, TS);
    const key = (r: { gateway_id: string; target_type: string; target_id: string }) =>
      `${r.gateway_id} ${r.target_type} ${r.target_id}`;
    expect((await keys.reachOf(WL, true)).map(key)).toEqual([`gw-a1 location ${L1}`]);
    expect((await keys.reachOf(WL, false)).map(key).sort()).toEqual(
      [`gw-a1 location ${L1}`, `gw-a3 location ${H1}`, `gw-a1 device ${L1_LOCKER}`].sort(),
    );
    expect(await keys.reachOf(OTHER, false)).toEqual([]);
  });
});
