import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { auditRepository } from "../../cloud/audit/audit-repository.ts";
import { keySyncRepository } from "../../cloud/key-sync/key-sync-repository.ts";
import type { ConsoleWhitelist, ConsoleWhitelistList } from "../../shared/api/console-whitelists.ts";
import { WhitelistEntityList } from "../../shared/api/whitelist.ts";
import { type CloudHarness, startCloudHarness } from "../support/cloud-harness.ts";
import {
  type ConsoleStaff,
  consoleRequests,
  expectError,
  type StaffCast,
  signedInCast,
} from "../support/console-api.ts";
import { declareKeysFixture, HOSTILE, KEYS, reportKeyVersion } from "../support/console-keys-fixture.ts";
import { CLIENTS, fx, OP_A, OP_B } from "../support/fixture-site.ts";

const WL = KEYS.whitelist;
let h: CloudHarness;
let staff: StaffCast;

beforeEach(async () => {
  h = await startCloudHarness();
  await declareKeysFixture(h);
  staff = await signedInCast(h);
});
afterEach(() => h.close());

const { get, post } = consoleRequests(() => h);

const send = (who: ConsoleStaff, method: "POST" | "DELETE", url: string, payload?: Record<string, unknown>) =>
  post(who, url, payload, method);

const addCard = (who: ConsoleStaff, card: Record<string, unknown>, id: string = WL) =>
  send(who, "POST", `/console/api/whitelists/${id}/cards`, card);
const removeCard = (who: ConsoleStaff, card: string, id: string = WL) =>
  send(who, "DELETE", `/console/api/whitelists/${id}/cards/${card}`);

async function page(who: ConsoleStaff, id: string = WL): Promise<ConsoleWhitelist> {
  const res = await get(who, `/console/api/whitelists/${id}`);
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}

/** The cards as the public API lists them to operator A's integrator. */
async function publicCards(): Promise<string[]> {
  const res = await h.call(CLIENTS.admin, { method: "GET", url: `/whitelist/v1/whitelists/${WL}/entities` });
  expect(res.statusCode, res.body).toBe(200);
  return WhitelistEntityList.parse(res.json())
    .data.map((e) => e.id)
    .sort();
}

const version = async (gw: string) => (await keySyncRepository(h.db).versionsOf(gw)).version;
const auditOf = () =>
  auditRepository(h.db).list(OP_A, { subject: { type: "whitelist", id: WL } }, { limit: 50 });

describe("the console's whitelists", () => {
  it("lists the operator's whitelists to every role with cards, targets and sync; another operator's are not", async () => {
    const res = await get(staff.viewer, "/console/api/whitelists");
    expect(res.statusCode, res.body).toBe(200);
    const { data } = res.json() as ConsoleWhitelistList;
    expect(data).toEqual([
      {
        id: WL,
        operator_id: OP_A,
        name: "Staff cards",
        description: HOSTILE,
        cards: 3,
        targets: { locations: 1, devices: 1, keys_only: 2 },
        // gw-a1 (L1) and gw-a2 (dock 1 of D1) got version 1 and never said they hold it.
        sync: { gateways: 2, pending: 2 },
      },
    ]);
    const all = (await get(staff.superadmin, "/console/api/whitelists")).json() as ConsoleWhitelistList;
    expect(all.data.map((w) => w.id).sort()).toEqual([WL, KEYS.whitelistB].sort());
  });

  it("shows a whitelist's cards as stored, its targets and each gateway's key version", async () => {
    await reportKeyVersion(h, "gw-a1", 1);
    const wl = await page(staff.viewer);
    expect(wl.cards).toEqual([
      expect.objectContaining({ id: KEYS.cards.expiring, status: "ACTIVE", expires_at: KEYS.expiresAt }),
      expect.objectContaining({ id: KEYS.cards.master, is_master_key: true, expires_at: "" }),
      expect.objectContaining({ id: KEYS.cards.inactive, status: "INACTIVE", comment: HOSTILE }),
    ]);
    expect(wl.targets).toEqual([
      {
        type: "device",
        id: fx.device("D1", "1"),
        keys_only: true,
        label: "#D1 Docks one · 1",
        location_id: fx.location("D1"),
      },
      {
        type: "location",
        id: fx.location("L1"),
        keys_only: true,
        label: "#L1 Lockers one",
        location_id: fx.location("L1"),
      },
    ]);
    const declaredAt = h.clock.now().toISOString();
    expect(wl.gateways).toEqual([
      expect.objectContaining({ gateway_id: "gw-a1", state: "in_sync", cloud_version: 1, held_version: 1 }),
      expect.objectContaining({
        gateway_id: "gw-a2",
        state: "pending",
        cloud_version: 1,
        held_version: null,
        pending_since: declaredAt,
        pending_since_exact: true,
      }),
    ]);
  });

  it("adds a card through the whitelist service: the public API lists it, key versions rise, the audit log names the staff member", async () => {
    await reportKeyVersion(h, "gw-a1", 1);
    h.clock.advance(60_000);
    const addedAt = h.clock.now().toISOString();
    const res = await addCard(staff.operator, {
      id: "0e0f",
      status: "ACTIVE",
      expires_at: "2030-05-01T10:00:00+02:00",
      is_master_key: true,
      comment: "spare",
    });
    expect(res.statusCode, res.body).toBe(204);
    expect(await publicCards()).toContain("0e0f");
    // The gateways serving the targets get a new key version and are told, as for an API change.
    expect(await version("gw-a1")).toBe(2);
    expect(await version("gw-a2")).toBe(2);
    expect(h.gateways.keyChanges).toContainEqual(["gw-a1", "gw-a2"]);
    const card = (await page(staff.viewer)).cards.find((c) => c.id === "0e0f");
    expect(card).toMatchObject({
      status: "ACTIVE",
      expires_at: "2030-05-01T08:00:00.000Z",
      is_master_key: true,
    });
    const gw = (await page(staff.viewer)).gateways.find((g) => g.gateway_id === "gw-a1");
    expect(gw).toMatchObject({
      state: "pending",
      held_version: 1,
      pending_since: addedAt,
      pending_since_exact: true,
    });
    await reportKeyVersion(h, "gw-a1", 2);
    expect((await page(staff.viewer)).gateways[0]).toMatchObject({ state: "in_sync", cloud_version: 2 });

    const [entry] = await auditOf();
    expect(entry).toMatchObject({
      actor: { kind: "staff", id: staff.operator.id },
      action: "whitelist.card-add",
      changes: { card_id: { from: null, to: "0e0f" }, is_master_key: { from: null, to: true } },
    });
  });

  it("says since when a gateway lags from the first version past what it holds, or the latest one once that record is pruned", async () => {
    await reportKeyVersion(h, "gw-a1", 1);
    h.clock.advance(60_000);
    const firstAt = h.clock.now().toISOString();
    expect((await addCard(staff.operator, { id: "0e0f" })).statusCode).toBe(204);
    h.clock.advance(60_000);
    const latestAt = h.clock.now().toISOString();
    expect((await addCard(staff.operator, { id: "0e10" })).statusCode).toBe(204);
    const lagging = async () => (await page(staff.viewer)).gateways.find((g) => g.gateway_id === "gw-a1");
    expect(await lagging()).toMatchObject({
      state: "pending",
      cloud_version: 3,
      held_version: 1,
      pending_since: firstAt,
      pending_since_exact: true,
    });
    await keySyncRepository(h.db).dropChangesUpTo("gw-a1", 2);
    expect(await lagging()).toMatchObject({ pending_since: latestAt, pending_since_exact: false });
  });

  it("removes a card: gone from the public API, a new key version, audited", async () => {
    const res = await removeCard(staff.operator, KEYS.cards.master);
    expect(res.statusCode, res.body).toBe(204);
    expect(await publicCards()).toEqual([KEYS.cards.expiring, KEYS.cards.inactive]);
    expect(await version("gw-a1")).toBe(2);
    const [entry] = await auditOf();
    expect(entry).toMatchObject({
      actor: { kind: "staff", id: staff.operator.id },
      action: "whitelist.card-remove",
      changes: { card_id: { from: KEYS.cards.master, to: null } },
    });
  });

  it("refuses a viewer's add and remove (403) and changes nothing", async () => {
    const before = await publicCards();
    expectError(await addCard(staff.viewer, { id: "0e0f" }), 403, "ERRORS.FORBIDDEN");
    expectError(await removeCard(staff.viewer, KEYS.cards.master), 403, "ERRORS.FORBIDDEN");
    expect(await publicCards()).toEqual(before);
    expect(await version("gw-a1")).toBe(1);
    expect(await auditOf()).toEqual([]);
  });

  it("answers another operator's whitelist as a missing one (404) and changes nothing", async () => {
    expectError(await get(staff.otherOperator, `/console/api/whitelists/${WL}`), 404, "ERRORS.NOT_FOUND");
    expectError(await addCard(staff.otherOperator, { id: "0e0f" }), 404, "ERRORS.NOT_FOUND");
    expectError(await removeCard(staff.otherOperator, KEYS.cards.master), 404, "ERRORS.NOT_FOUND");
    expectError(
      await get(staff.viewer, `/console/api/whitelists/${KEYS.whitelistB}`),
      404,
      "ERRORS.NOT_FOUND",
    );
    const list = (await get(staff.otherOperator, "/console/api/whitelists")).json() as ConsoleWhitelistList;
    expect(list.data.map((w) => w.id)).toEqual([KEYS.whitelistB]);
    expect(await publicCards()).toEqual([KEYS.cards.expiring, KEYS.cards.master, KEYS.cards.inactive]);
    // A superadmin reads any operator's whitelist.
    expect((await page(staff.superadmin, KEYS.whitelistB)).operator_id).toBe(OP_B);
  });

  it("refuses bad cards in the spec's error body, as the public API's items, and changes nothing", async () => {
    expectError(await addCard(staff.operator, { id: "04:A1" }), 400, "ERRORS.INVALID_CARD_ID");
    expectError(
      await addCard(staff.operator, { id: "0e0f", status: "EXPIRED" }),
      400,
      "ERRORS.VALIDATION_FAILED",
    );
    expectError(
      await addCard(staff.operator, { id: "0e0f", expires_at: "soon" }),
      400,
      "ERRORS.VALIDATION_FAILED",
    );
    expectError(
      await addCard(staff.operator, { id: "0e0f", colour: "red" }),
      400,
      "ERRORS.VALIDATION_FAILED",
    );
    expectError(await removeCard(staff.operator, "XYZ"), 400, "ERRORS.INVALID_CARD_ID");
    const notJson = await h.app.inject({
      method: "POST",
      url: `/console/api/whitelists/${WL}/cards`,
      payload: "[1]",
      headers: { "content-type": "application/json", "x-csrf-token": staff.operator.csrf },
      cookies: { console_session: staff.operator.cookie },
    });
    expectError(notJson, 400, "ERRORS.VALIDATION_FAILED");
    expect(await publicCards()).toEqual([KEYS.cards.expiring, KEYS.cards.master, KEYS.cards.inactive]);
    expect(await version("gw-a1")).toBe(1);
    expect(await auditOf()).toEqual([]);
  });
});
