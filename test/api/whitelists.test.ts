import type { InjectOptions, LightMyRequestResponse } from "fastify";
import { sql } from "kysely";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createTokenIssuer } from "../../cloud/auth/tokens.ts";
import { applyManifest, checkManifest, derivedId } from "../../cloud/manifest/apply-manifest.ts";
import { findProblems } from "../../cloud/manifest/manifest-problems.ts";
import { type ManifestInput, SiteManifest } from "../../cloud/manifest/manifest-schema.ts";
import { whitelistRepository } from "../../cloud/whitelists/whitelist-repository.ts";
import { PERMISSIONS, type Permission } from "../../shared/api/permissions.ts";
import {
  MAX_BATCH_ITEMS,
  Whitelist,
  WhitelistEntityList,
  WhitelistList,
  WhitelistTargetList,
} from "../../shared/api/whitelist.ts";
import {
  type CloudHarness,
  fixtureSecretHash,
  ISSUER,
  startCloudHarness,
  TOKEN_SECRET,
} from "../support/cloud-harness.ts";
import { eventually } from "../support/eventually.ts";
import { CLIENTS, OP_A, OP_B } from "../support/fixture-site.ts";

/**
 * The whitelist API (spec: Whitelist; docs/decisions/whitelists.md), on both stores. Whitelists and their
 * first targets come from the site manifest, as the service operator sets them up; cards and further
 * targets through the API.
 */

/** Whitelists of operator A (fixed ids, as a manifest declares them) and one of operator B. */
const STAFF = "5a5a5a5a-0000-4000-8000-000000000001";
const SPARE = [2, 3, 4, 5].map((n) => `5a5a5a5a-0000-4000-8000-00000000000${n}`);
const B_LIST = "5b5b5b5b-0000-4000-8000-000000000001";
const UNKNOWN = "5c5c5c5c-0000-4000-8000-000000000009";

const ANN = "04a1b2c3d4";
const BOB = "04a1b2c3d5";

const WL = derivedId(OP_A, "location", "WL");
const WM = derivedId(OP_A, "location", "WM");
const WB = derivedId(OP_B, "location", "WB");
const deviceAt = (location: string, alias: string) => derivedId(location, "device", alias);
const NORTH = deviceAt(WL, "door-north");
const SOUTH = deviceAt(WL, "door-south");
const WM1 = deviceAt(WM, "1");
const WB1 = deviceAt(WB, "1");
const GUARD_WL = derivedId("gateway", "gw-wl");

const HOUR = 3_600_000;
const READ_TIMEOUT_MS = 2_000;

type ListInput = NonNullable<ManifestInput["operators"][number]["whitelists"]>;

/** A's bike house WL (two doors, a locker, gateway gw-wl), its lockers WM (gw-wm), and B's lockers WB. */
async function siteManifest(aLists: ListInput, bLists: ListInput = []): Promise<ManifestInput> {
  const secret = { secret_hash: await fixtureSecretHash() };
  return {
    version: 1,
    operators: [
      {
        id: OP_A,
        name: "Operator A",
        locations: [
          {
            code: "WL",
            label: "Whitelisted house",
            type: "BIKE_HOUSE",
            latitude: 52.2,
            longitude: 4.2,
            gateways: [
              {
                id: "gw-wl",
                ...secret,
                devices: [
                  { alias: "door-north", type: "BIKE_HOUSE_DOOR" },
                  { alias: "door-south", type: "BIKE_HOUSE_DOOR" },
                  { alias: "1", type: "LOCKER" },
                ],
              },
            ],
          },
          {
            code: "WM",
            label: "More lockers",
            type: "BIKE_LOCKERS",
            latitude: 52.3,
            longitude: 4.3,
            gateways: [{ id: "gw-wm", ...secret, devices: [{ alias: "1", type: "LOCKER" }] }],
          },
        ],
        whitelists: aLists,
      },
      {
        id: OP_B,
        name: "Operator B",
        locations: [
          {
            code: "WB",
            label: "B lockers",
            type: "BIKE_LOCKERS",
            latitude: 52.4,
            longitude: 4.4,
            gateways: [{ id: "gw-wb", ...secret, devices: [{ alias: "1", type: "LOCKER" }] }],
          },
        ],
        whitelists: bLists,
      },
    ],
  };
}

const A_LISTS: ListInput = [
  {
    id: STAFF,
    name: "Staff",
    description: "Door cards of the staff",
    targets: [{ location: "WL" }],
    entities: [{ id: ANN, comment: "Ann" }, { id: BOB }],
  },
  ...SPARE.map((id, i) => ({ id, name: `Spare ${i + 1}` })),
];
const B_LISTS: ListInput = [
  { id: B_LIST, name: "B members", targets: [{ location: "WB" }], entities: [{ id: "0b0b" }] },
];

let h: CloudHarness;

async function fresh(opts: Parameters<typeof startCloudHarness>[0] = {}) {
  h = await startCloudHarness(opts);
  await applyManifest(h.db, SiteManifest.parse(await siteManifest(A_LISTS, B_LISTS)), h.clock);
}

/** Tokens are minted directly (no store round trip), so a test may hold the store and still call. */
const issuer = () => createTokenIssuer({ secret: TOKEN_SECRET, issuer: ISSUER, clock: h.clock });
const CLIENT_OPS: Record<string, { op: string; perms: readonly Permission[] }> = {
  [CLIENTS.admin]: { op: OP_A, perms: PERMISSIONS },
  [CLIENTS.basic]: { op: OP_A, perms: [] },
  [CLIENTS.other]: { op: OP_B, perms: PERMISSIONS },
};
type Caller = { client: string } | { rider: string; op: string };
const ADMIN: Caller = { client: CLIENTS.admin };
const BASIC: Caller = { client: CLIENTS.basic };
const OTHER: Caller = { client: CLIENTS.other };
const RIDER: Caller = { rider: "11111111-1111-4111-8111-111111111111", op: OP_A };

function tokenOf(as: Caller): Promise<string> {
  if ("client" in as) {
    const c = CLIENT_OPS[as.client] as { op: string; perms: readonly Permission[] };
    return issuer().issue({ id: as.client, operatorId: c.op, permissions: c.perms });
  }
  return issuer().issueUser({ id: as.rider, operatorId: as.op });
}

async function call(as: Caller, opts: InjectOptions): Promise<LightMyRequestResponse> {
  const authorization = `Bearer ${await tokenOf(as)}`;
  return h.app.inject({ ...opts, headers: { ...(opts.headers ?? {}), authorization } });
}

const listUrl = (id: string) => `/whitelist/v1/whitelists/${id}`;
const entitiesUrl = (id: string) => `${listUrl(id)}/entities`;
const targetsUrl = (id: string) => `${listUrl(id)}/targets`;
const locationUrl = (id: string) => `/whitelist/v1/locations/${id}/whitelists`;

type Op = "ADD" | "REMOVE";
const postEntities = (id: string, operation: Op, entities: unknown[], as: Caller = ADMIN) =>
  call(as, { method: "POST", url: entitiesUrl(id), payload: { operation, entities } });
const postTargets = (id: string, operation: Op, targets: unknown[], as: Caller = ADMIN) =>
  call(as, { method: "POST", url: targetsUrl(id), payload: { operation, targets } });

const card = (id: string, extra: Record<string, unknown> = {}) => ({ id, id_type: "rfid", ...extra });
const device = (id: string, extra: Record<string, unknown> = {}) => ({
  id,
  type: "device",
  uri: `/device/v1/devices/${id}`,
  ...extra,
});
const location = (id: string, extra: Record<string, unknown> = {}) => ({
  id,
  type: "location",
  uri: `/location/v1/locations/${id}`,
  ...extra,
});

async function ok(res: Promise<LightMyRequestResponse>) {
  const r = await res;
  expect(r.statusCode, r.body).toBe(204);
  expect(r.body).toBe("");
}

async function entities(id: string, as: Caller = ADMIN) {
  const res = await call(as, { method: "GET", url: entitiesUrl(id) });
  expect(res.statusCode, res.body).toBe(200);
  expect(res.json().uri).toBe(entitiesUrl(id));
  return WhitelistEntityList.parse(res.json()).data;
}

async function entity(list: string, cardId: string) {
  const found = (await entities(list)).find((e) => e.id === cardId);
  if (!found) throw new Error(`no card ${cardId} in ${list}`);
  return found;
}

async function targets(id: string, query = "", as: Caller = ADMIN) {
  const res = await call(as, { method: "GET", url: `${targetsUrl(id)}${query}` });
  expect(res.statusCode, res.body).toBe(200);
  expect(res.json().uri).toBe(targetsUrl(id));
  return WhitelistTargetList.parse(res.json()).data;
}

async function atLocation(id: string, as: Caller = ADMIN) {
  const res = await call(as, { method: "GET", url: locationUrl(id) });
  expect(res.statusCode, res.body).toBe(200);
  expect(res.json().uri).toBe(locationUrl(id));
  return WhitelistList.parse(res.json()).data.map((w) => w.id);
}

function expectError(res: LightMyRequestResponse, status: number, code: string, message?: RegExp) {
  expect(res.statusCode, res.body).toBe(status);
  const body = res.json();
  expect(Object.keys(body).sort()).toEqual(["correlation_id", "error_code", "error_message", "status_code"]);
  expect(body).toMatchObject({ status_code: status, error_code: code });
  expect(body.correlation_id).toBe(res.headers["x-correlation-id"]);
  if (message) expect(body.error_message).toMatch(message);
}

type Failure = { index: number; id: string; error_code: string; error_message?: RegExp };

/** 400 with the standard fields and `error_results` holding exactly these items, in order. */
function expectBatchFailure(res: LightMyRequestResponse, key: "entity" | "target", failures: Failure[]) {
  expect(res.statusCode, res.body).toBe(400);
  const body = res.json();
  expect(Object.keys(body).sort()).toEqual([
    "correlation_id",
    "error_code",
    "error_message",
    "error_results",
    "status_code",
  ]);
  expect(body).toMatchObject({ status_code: 400, error_code: "ERRORS.BATCH_ITEMS_FAILED" });
  expect(body.correlation_id).toBe(res.headers["x-correlation-id"]);
  const results = body.error_results as Record<string, unknown>[];
  expect(results.map((r) => ({ index: r.index, id: r.id, error_code: r.error_code }))).toEqual(
    failures.map(({ index, id, error_code }) => ({ index, id, error_code })),
  );
  results.forEach((r, i) => {
    expect(Object.keys(r).sort()).toEqual(["error_code", "error_message", "id", "index", key].sort());
    const m = failures[i]?.error_message;
    if (m) expect(r.error_message).toMatch(m);
  });
  return results;
}

/** Status, headers and body a caller can compare, with the ids it asked about named. */
function shape(res: LightMyRequestResponse, ids: Record<string, string>) {
  let body = res.body;
  for (const [name, value] of Object.entries(ids)) body = body.split(value).join(`{${name}}`);
  const parsed = JSON.parse(body) as Record<string, unknown>;
  delete parsed.correlation_id;
  const { date: _d, "x-correlation-id": _c, "content-length": _l, ...headers } = res.headers;
  return { status: res.statusCode, headers, body: parsed };
}

/** Every whitelist of both operators with its cards and targets, to show a refused request changed nothing. */
async function rows() {
  const repo = whitelistRepository(h.db);
  const out = { whitelists: [] as string[], entities: [] as string[], targets: [] as string[] };
  for (const operatorId of [OP_A, OP_B])
    for (const list of await repo.listForOperator(operatorId)) {
      out.whitelists.push(JSON.stringify(list));
      for (const e of await repo.entities(list.id)) out.entities.push(JSON.stringify(e));
      for (const t of await repo.targets(list.id)) out.targets.push(JSON.stringify(t));
    }
  for (const all of Object.values(out)) all.sort();
  return out;
}

const now = () => h.clock.now().toISOString();
const later = (ms: number) => new Date(h.clock.now().getTime() + ms).toISOString();

describe("reading whitelists", () => {
  beforeEach(() => fresh());
  afterEach(() => h.close());

  it("lists the operator's whitelists, and only its own, by name", async () => {
    const res = await call(ADMIN, { method: "GET", url: "/whitelist/v1/whitelists" });
    expect(res.statusCode, res.body).toBe(200);
    const body = WhitelistList.parse(res.json());
    expect(body.uri).toBe("/whitelist/v1/whitelists");
    expect(body.data.map((w) => w.name)).toEqual(["Spare 1", "Spare 2", "Spare 3", "Spare 4", "Staff"]);
    expect(body.data.find((w) => w.id === STAFF)).toEqual({
      name: "Staff",
      description: "Door cards of the staff",
      id: STAFF,
      uri: listUrl(STAFF),
    });
    for (const w of res.json().data)
      expect(Object.keys(w).sort()).toEqual(["description", "id", "name", "uri"]);
    const b = await call(OTHER, { method: "GET", url: "/whitelist/v1/whitelists" });
    expect(b.json().data.map((w: { id: string }) => w.id)).toEqual([B_LIST]);
  });

  it("answers a whitelist by id (in any letter case); another operator's exactly like a missing one", async () => {
    for (const id of [STAFF, STAFF.toUpperCase()]) {
      const res = await call(ADMIN, { method: "GET", url: listUrl(id) });
      expect(res.statusCode, res.body).toBe(200);
      expect(Whitelist.parse(res.json())).toEqual({
        name: "Staff",
        description: "Door cards of the staff",
        id: STAFF,
        uri: listUrl(STAFF),
      });
    }
    for (const url of [listUrl, entitiesUrl, targetsUrl]) {
      const foreign = await call(ADMIN, { method: "GET", url: url(B_LIST) });
      expectError(foreign, 404, "ERRORS.NOT_FOUND");
      const missing = await call(ADMIN, { method: "GET", url: url(UNKNOWN) });
      expect(shape(foreign, { id: B_LIST })).toEqual(shape(missing, { id: UNKNOWN }));
    }
    // Not a UUID: the spec's 400 for these routes (the id names nothing).
    expectError(
      await call(ADMIN, { method: "GET", url: listUrl("not-a-uuid") }),
      400,
      "ERRORS.VALIDATION_FAILED",
    );
  });

  it("lists a location's whitelists: those targeting it or any of its devices; nothing for others' or unknown ones", async () => {
    expect(await atLocation(WL)).toEqual([STAFF]);
    expect(await atLocation(WM)).toEqual([]);
    await ok(postEntities(SPARE[0] as string, "ADD", [card(ANN)]));
    await ok(postTargets(SPARE[0] as string, "ADD", [device(WM1)]));
    await ok(postTargets(SPARE[1] as string, "ADD", [device(NORTH)]));
    expect(await atLocation(WM)).toEqual([SPARE[0]]);
    expect((await atLocation(WL)).sort()).toEqual([STAFF, SPARE[1]].sort());
    // Like the spec's row, no 404: another operator's, an unknown and a malformed location list nothing.
    expect(await atLocation(WB)).toEqual([]);
    expect(await atLocation(WL, OTHER)).toEqual([]);
    expect(await atLocation(WB, OTHER)).toEqual([B_LIST]);
    expect(await atLocation(UNKNOWN)).toEqual([]);
    expect(await atLocation("not-a-uuid")).toEqual([]);
  });

  it("lets any client of the operator read whitelists, cards and targets (no permission needed)", async () => {
    const res = await call(BASIC, { method: "GET", url: "/whitelist/v1/whitelists" });
    expect(res.statusCode).toBe(200);
    expect((await entities(STAFF, BASIC)).map((e) => e.id)).toEqual([ANN, BOB]);
    expect((await targets(STAFF, "", BASIC)).map((t) => t.id)).toEqual([WL]);
  });
});

describe("entities", () => {
  beforeEach(() => fresh());
  afterEach(() => h.close());

  it("adds cards (204) and lists them with the spec's fields: defaults ACTIVE, no expiry, no master key, no comment", async () => {
    const list = SPARE[0] as string;
    expect(await entities(list)).toEqual([]);
    await ok(
      postEntities(list, "ADD", [card("0a0b"), card("ffee", { is_master_key: true, comment: "Caretaker" })]),
    );
    const res = await call(ADMIN, { method: "GET", url: entitiesUrl(list) });
    expect(res.json()).toEqual({
      data: [
        {
          id: "0a0b",
          id_type: "rfid",
          status: "ACTIVE",
          expires_at: "",
          is_master_key: false,
          comment: "",
          created_at: now(),
        },
        {
          id: "ffee",
          id_type: "rfid",
          status: "ACTIVE",
          expires_at: "",
          is_master_key: true,
          comment: "Caretaker",
          created_at: now(),
        },
      ],
      uri: entitiesUrl(list),
    });
  });

  it("ADD replaces a card already in the list (upsert): every field is the new one, created_at stays", async () => {
    const created = now();
    h.clock.advance(HOUR);
    await ok(
      postEntities(STAFF, "ADD", [
        card(ANN, { status: "INACTIVE", expires_at: later(HOUR), is_master_key: true, comment: "on leave" }),
      ]),
    );
    expect(await entity(STAFF, ANN)).toEqual({
      id: ANN,
      id_type: "rfid",
      status: "INACTIVE",
      expires_at: later(HOUR),
      is_master_key: true,
      comment: "on leave",
      created_at: created,
    });
    // Fields left out take their defaults: the record is replaced, not merged.
    await ok(postEntities(STAFF, "ADD", [card(ANN)]));
    expect(await entity(STAFF, ANN)).toMatchObject({
      status: "ACTIVE",
      expires_at: "",
      is_master_key: false,
      comment: "",
      created_at: created,
    });
    expect((await entities(STAFF)).map((e) => e.id)).toEqual([ANN, BOB]);
  });

  it("shows EXPIRED only in reads: an ACTIVE card from its expires_at on; INACTIVE stays INACTIVE", async () => {
    // Any UTC offset is taken and kept as UTC.
    await ok(
      postEntities(STAFF, "ADD", [
        card(ANN, { expires_at: "2026-01-15T12:00:00+01:00" }),
        card(BOB, { status: "INACTIVE", expires_at: "2026-01-15T11:00:00Z" }),
      ]),
    );
    expect(await entity(STAFF, ANN)).toMatchObject({
      status: "ACTIVE",
      expires_at: "2026-01-15T11:00:00.000Z",
    });
    h.clock.advance(HOUR - 1);
    expect((await entity(STAFF, ANN)).status).toBe("ACTIVE");
    h.clock.advance(1);
    expect((await entity(STAFF, ANN)).status).toBe("EXPIRED");
    expect((await entity(STAFF, BOB)).status).toBe("INACTIVE");
    // Stored as written: EXPIRED is never stored.
    const stored = await whitelistRepository(h.db).entities(STAFF);
    expect(stored.map((r) => r.status).sort()).toEqual(["ACTIVE", "INACTIVE"]);
    // A new expiry in the future makes the card ACTIVE again.
    await ok(postEntities(STAFF, "ADD", [card(ANN, { expires_at: later(HOUR) })]));
    expect((await entity(STAFF, ANN)).status).toBe("ACTIVE");
  });

  it("refuses status EXPIRED on write, failing that item alone", async () => {
    const res = await postEntities(STAFF, "ADD", [card("0c0c", { status: "EXPIRED" }), card("0d0d")]);
    expectBatchFailure(res, "entity", [
      {
        index: 0,
        id: "0c0c",
        error_code: "ERRORS.VALIDATION_FAILED",
        error_message: /status: EXPIRED is read-only/,
      },
    ]);
    expect((await entities(STAFF)).map((e) => e.id)).toEqual([ANN, BOB, "0d0d"]);
  });

  it("refuses card ids that are not lowercase hex of even length and at most 20 characters, never normalising them", async () => {
    const bad = ["04A1B2C3D4", "04:a1:b2", "04a1b", "", "0x04a1", " 04a1", "00112233445566778899aa", "zz"];
    const res = await postEntities(STAFF, "ADD", [
      ...bad.map((id) => card(id)),
      card("00112233445566778899"),
    ]);
    expectBatchFailure(
      res,
      "entity",
      bad.map((id, index) => ({ index, id, error_code: "ERRORS.INVALID_CARD_ID", error_message: /^id: / })),
    );
    // Only the valid one (20 characters) is in; nothing was stored under a normalised form.
    expect((await entities(STAFF)).map((e) => e.id)).toEqual(["00112233445566778899", ANN, BOB]);
    // A card id that is not a string at all, or missing, fails its item the same way.
    const odd = await postEntities(STAFF, "ADD", [{ id: 1234, id_type: "rfid" }, { id_type: "rfid" }]);
    expectBatchFailure(odd, "entity", [
      { index: 0, id: "", error_code: "ERRORS.INVALID_CARD_ID" },
      { index: 1, id: "", error_code: "ERRORS.INVALID_CARD_ID" },
    ]);
  });

  it("processes items one by one: a failed item rolls nothing else back, and error_results lists only the failed ones", async () => {
    const res = await postEntities(STAFF, "ADD", [
      card("0101", { comment: "first" }),
      card("0202", { id_type: "nfc" }),
      card("0303", { expires_at: "tomorrow" }),
      card("0404", { colour: "red" }),
      card(ANN, { comment: "updated" }),
    ]);
    const results = expectBatchFailure(res, "entity", [
      { index: 1, id: "0202", error_code: "ERRORS.VALIDATION_FAILED", error_message: /^id_type: / },
      { index: 2, id: "0303", error_code: "ERRORS.VALIDATION_FAILED", error_message: /^expires_at: / },
      {
        index: 3,
        id: "0404",
        error_code: "ERRORS.VALIDATION_FAILED",
        error_message: /^colour: unknown field/,
      },
    ]);
    // The item as sent, under the spec's `entity`.
    expect(results[0]?.entity).toEqual({ id: "0202", id_type: "nfc" });
    expect(res.json().error_message).toMatch(/3 items of the batch failed/);
    const after = await entities(STAFF);
    expect(after.map((e) => e.id)).toEqual(["0101", ANN, BOB]);
    expect(after.find((e) => e.id === ANN)?.comment).toBe("updated");
  });

  it("REMOVE needs only id and id_type; a card that is not in the list is removed already (204)", async () => {
    await ok(postEntities(STAFF, "REMOVE", [card(ANN)]));
    expect((await entities(STAFF)).map((e) => e.id)).toEqual([BOB]);
    await ok(postEntities(STAFF, "REMOVE", [card(ANN), card("0e0e")]));
    expect((await entities(STAFF)).map((e) => e.id)).toEqual([BOB]);
    // REMOVE still checks the id and id_type of each item.
    const res = await postEntities(STAFF, "REMOVE", [card("0E0E"), { id: BOB }, card(BOB)]);
    expectBatchFailure(res, "entity", [
      { index: 0, id: "0E0E", error_code: "ERRORS.INVALID_CARD_ID" },
      { index: 1, id: BOB, error_code: "ERRORS.VALIDATION_FAILED", error_message: /^id_type: / },
    ]);
    expect(await entities(STAFF)).toEqual([]);
  });

  it("REMOVE takes an entity as read back (status EXPIRED, created_at) and ignores its other fields", async () => {
    await ok(postEntities(STAFF, "ADD", [card(ANN, { expires_at: now() })]));
    const read = await entity(STAFF, ANN);
    expect(read.status).toBe("EXPIRED");
    await ok(postEntities(STAFF, "REMOVE", [read]));
    expect((await entities(STAFF)).map((e) => e.id)).toEqual([BOB]);
  });

  it("refuses a body that is not an operation with 1 to 1000 objects, whole, changing nothing", async () => {
    const before = await rows();
    const bodies: unknown[] = [
      { entities: [card("0a0a")] },
      { operation: "DELETE", entities: [card("0a0a")] },
      { operation: "ADD" },
      { operation: "ADD", entities: card("0a0a") },
      { operation: "ADD", entities: [] },
      { operation: "ADD", entities: [card("0a0a"), "0b0b"] },
      { operation: "ADD", entities: [card("0a0a")], extra: true },
      { operation: "REMOVE", entities: Array.from({ length: MAX_BATCH_ITEMS + 1 }, () => card(ANN)) },
    ];
    for (const payload of bodies) {
      const res = await call(ADMIN, { method: "POST", url: entitiesUrl(STAFF), payload: payload as object });
      expectError(res, 400, "ERRORS.VALIDATION_FAILED", /^body/);
    }
    // The largest batch is taken.
    await ok(
      postEntities(
        STAFF,
        "REMOVE",
        Array.from({ length: MAX_BATCH_ITEMS }, () => card("0f0f")),
      ),
    );
    expect(await rows()).toEqual(before);
  });

  it("answers an unknown whitelist and another operator's 404 alike, changing nothing", async () => {
    const before = await rows();
    const foreign = await postEntities(B_LIST, "ADD", [card(ANN)]);
    expectError(foreign, 404, "ERRORS.NOT_FOUND");
    const missing = await postEntities(UNKNOWN, "ADD", [card(ANN)]);
    expect(shape(foreign, { id: B_LIST })).toEqual(shape(missing, { id: UNKNOWN }));
    expectError(await postEntities(STAFF, "ADD", [card(ANN)], OTHER), 404, "ERRORS.NOT_FOUND");
    expect(await rows()).toEqual(before);
  });
});

describe("targets", () => {
  beforeEach(() => fresh());
  afterEach(() => h.close());
  const list = () => SPARE[0] as string;

  it("adds devices and locations (SUPERADMIN), read back as reference, keys_only, id_type and id", async () => {
    await ok(
      postTargets(list(), "ADD", [device(NORTH), location(WM, { keys_only: false }), device(GUARD_WL)]),
    );
    const res = await call(ADMIN, { method: "GET", url: targetsUrl(list()) });
    expect(res.statusCode).toBe(200);
    const data = res.json().data as Record<string, unknown>[];
    expect(data).toHaveLength(3);
    expect(data).toEqual(
      expect.arrayContaining([
        {
          id: NORTH,
          id_type: "device",
          keys_only: true,
          reference: { id: NORTH, uri: `/device/v1/devices/${NORTH}` },
        },
        {
          id: GUARD_WL,
          id_type: "device",
          keys_only: true,
          reference: { id: GUARD_WL, uri: `/device/v1/devices/${GUARD_WL}` },
        },
        {
          id: WM,
          id_type: "location",
          keys_only: false,
          reference: { id: WM, uri: `/location/v1/locations/${WM}` },
        },
      ]),
    );
    // The references resolve.
    for (const t of data) {
      const ref = t.reference as { uri: string };
      expect((await call(ADMIN, { method: "GET", url: ref.uri })).statusCode, ref.uri).toBe(200);
    }
  });

  it("filters by type=device or type=location; another value or parameter is 400", async () => {
    await ok(postTargets(list(), "ADD", [device(NORTH), location(WM)]));
    expect((await targets(list(), "?type=device")).map((t) => t.id)).toEqual([NORTH]);
    expect((await targets(list(), "?type=location")).map((t) => t.id)).toEqual([WM]);
    expect(await targets(list(), "")).toHaveLength(2);
    for (const q of [
      "?type=gateway",
      "?type=",
      "?type=device&type=location",
      "?kind=device",
      "?type=DEVICE",
    ]) {
      const res = await call(ADMIN, { method: "GET", url: `${targetsUrl(list())}${q}` });
      expectError(res, 400, "ERRORS.VALIDATION_FAILED", /querystring/);
    }
  });

  it("ADD of a target already there sets its keys_only; id_type is taken for type", async () => {
    await ok(postTargets(list(), "ADD", [device(NORTH)]));
    await ok(
      postTargets(list(), "ADD", [
        { id: NORTH, id_type: "device", uri: `/device/v1/devices/${NORTH}`, keys_only: false },
      ]),
    );
    expect(await targets(list())).toEqual([
      {
        id: NORTH,
        id_type: "device",
        keys_only: false,
        reference: { id: NORTH, uri: `/device/v1/devices/${NORTH}` },
      },
    ]);
    // An upper-case id is the same target.
    await ok(postTargets(list(), "ADD", [device(NORTH.toUpperCase(), { keys_only: true })]));
    expect((await targets(list())).map((t) => [t.id, t.keys_only])).toEqual([[NORTH, true]]);
  });

  it("fails, item by item, a wrong uri, a missing type, and a target of another operator or none, alike", async () => {
    const res = await postTargets(list(), "ADD", [
      device(NORTH, { uri: `/location/v1/locations/${NORTH}` }),
      { id: SOUTH, uri: `/device/v1/devices/${SOUTH}` },
      device(SOUTH, { id_type: "location" }),
      device(WB1),
      device(UNKNOWN),
      location(WB),
      location(UNKNOWN),
      device(NORTH, { uri: undefined }),
      location(WM),
    ]);
    const results = expectBatchFailure(res, "target", [
      {
        index: 0,
        id: NORTH,
        error_code: "ERRORS.VALIDATION_FAILED",
        error_message: /^uri: must be \/device\/v1/,
      },
      { index: 1, id: SOUTH, error_code: "ERRORS.VALIDATION_FAILED", error_message: /^type: / },
      { index: 2, id: SOUTH, error_code: "ERRORS.VALIDATION_FAILED", error_message: /^id_type: differs/ },
      { index: 3, id: WB1, error_code: "ERRORS.UNKNOWN_TARGET" },
      { index: 4, id: UNKNOWN, error_code: "ERRORS.UNKNOWN_TARGET" },
      { index: 5, id: WB, error_code: "ERRORS.UNKNOWN_TARGET" },
      { index: 6, id: UNKNOWN, error_code: "ERRORS.UNKNOWN_TARGET" },
      { index: 7, id: NORTH, error_code: "ERRORS.VALIDATION_FAILED", error_message: /^uri: / },
    ]);
    // Another operator's device answers exactly like a missing one.
    expect(results[3]?.error_message).toBe(results[4]?.error_message);
    expect(results[5]?.error_message).toBe(results[6]?.error_message);
    expect(results[3]?.target).toEqual(device(WB1));
    expect((await targets(list())).map((t) => t.id)).toEqual([WM]);
  });

  it("REMOVE needs only id and type; a target that is not there is removed already", async () => {
    await ok(postTargets(list(), "ADD", [device(NORTH), location(WM)]));
    await ok(
      postTargets(list(), "REMOVE", [
        { id: NORTH, type: "device" },
        { id: WM, id_type: "location" },
      ]),
    );
    expect(await targets(list())).toEqual([]);
    await ok(
      postTargets(list(), "REMOVE", [
        { id: NORTH, type: "device" },
        { id: WB1, type: "device" },
      ]),
    );
    const res = await postTargets(list(), "REMOVE", [{ id: NORTH }, { id: "north", type: "device" }]);
    expectBatchFailure(res, "target", [
      { index: 0, id: NORTH, error_code: "ERRORS.VALIDATION_FAILED" },
      { index: 1, id: "north", error_code: "ERRORS.VALIDATION_FAILED", error_message: /^id: / },
    ]);
  });

  it("needs SUPERADMIN to change targets (403, the same for any whitelist id), though any client reads them", async () => {
    const before = await rows();
    for (const id of [list(), B_LIST, UNKNOWN]) {
      const res = await postTargets(id, "ADD", [device(NORTH)], BASIC);
      expectError(res, 403, "ERRORS.FORBIDDEN", /SUPERADMIN/);
    }
    expect(await rows()).toEqual(before);
    expect(await targets(STAFF, "", BASIC)).toHaveLength(1);
    // Cards are the integrators' business: no permission needed.
    await ok(postEntities(STAFF, "ADD", [card("0a0a")], BASIC));
  });

  it("lets a device be the direct target of at most 3 whitelists, with a clear error; location targets do not count", async () => {
    const [w1, w2, w3, w4] = SPARE as [string, string, string, string];
    for (const w of [w1, w2, w3]) await ok(postTargets(w, "ADD", [device(NORTH)]));
    // STAFF targets the door's location, which does not count: the door has 3 whitelists, not 4.
    const res = await postTargets(w4, "ADD", [device(NORTH), device(SOUTH), location(WL)]);
    expectBatchFailure(res, "target", [
      {
        index: 0,
        id: NORTH,
        error_code: "ERRORS.WHITELIST_LIMIT_REACHED",
        error_message: /already has 3 whitelists, the most a device can have \(3\)/,
      },
    ]);
    expect((await targets(w4)).map((t) => t.id).sort()).toEqual([SOUTH, WL].sort());
    // A whitelist already targeting the device may still change it.
    await ok(postTargets(w1, "ADD", [device(NORTH, { keys_only: false })]));
    // Once one lets go, the fourth gets its place.
    await ok(postTargets(w2, "REMOVE", [{ id: NORTH, type: "device" }]));
    await ok(postTargets(w4, "ADD", [device(NORTH)]));
  });

  it("takes the per-device limit from the app's settings", async () => {
    await h.close();
    await fresh({ whitelists: { maxPerDevice: 1 } });
    await ok(postTargets(SPARE[0] as string, "ADD", [device(NORTH)]));
    const res = await postTargets(SPARE[1] as string, "ADD", [device(NORTH)]);
    expectBatchFailure(res, "target", [
      { index: 0, id: NORTH, error_code: "ERRORS.WHITELIST_LIMIT_REACHED", error_message: /\(1\)/ },
    ]);
  });
});

describe("key sync", () => {
  beforeEach(() => fresh());
  afterEach(() => h.close());

  it("tells the gateways whose keys changed, once per batch and after it, and nobody when nothing reaches a gateway", async () => {
    const calls = () => h.gateways.keyChanges.length;
    // STAFF targets WL (keys_only by default): its cards reach gw-wl.
    let before = calls();
    await ok(postEntities(STAFF, "ADD", [card("0a0a"), card("0b0b")]));
    expect(h.gateways.keyChanges.slice(before)).toEqual([["gw-wl"]]);
    before = calls();
    await ok(postEntities(STAFF, "REMOVE", [card("0a0a")]));
    expect(h.gateways.keyChanges.slice(before)).toEqual([["gw-wl"]]);
    // A list targeting nothing, a failed item, and removing what is not there reach no gateway.
    before = calls();
    await ok(postEntities(SPARE[0] as string, "ADD", [card("0c0c")]));
    expect((await postEntities(STAFF, "ADD", [card("0C0C")])).statusCode).toBe(400);
    await ok(postEntities(STAFF, "REMOVE", [card("0d0d")]));
    expect(calls()).toBe(before);
    // A target change moves the whole list: the new target's gateway hears of it.
    await ok(postTargets(SPARE[0] as string, "ADD", [device(WM1)]));
    expect(h.gateways.keyChanges.slice(before)).toEqual([["gw-wm"]]);
  });
});

/** Holds the store so whitelist reads wait: SQLite's one connection, or PostgreSQL's lock on the table. */
async function holdStore(): Promise<() => Promise<void>> {
  let release = () => {};
  const released = new Promise<void>((r) => {
    release = r;
  });
  let held = () => {};
  const holding = new Promise<void>((r) => {
    held = r;
  });
  const done = h.db.transaction().execute(async (trx) => {
    if (h.store.kind === "postgres") await sql`lock table whitelists in access exclusive mode`.execute(trx);
    else await sql`select 1`.execute(trx);
    held();
    await released;
  });
  await holding;
  return async () => {
    release();
    await done;
  };
}

describe("a slow store", () => {
  beforeEach(() => fresh({ whitelists: { readTimeoutMs: READ_TIMEOUT_MS } }));
  afterEach(() => h.close());

  it.each([
    ["entities", entitiesUrl(STAFF)],
    ["targets", `${targetsUrl(STAFF)}?type=location`],
  ])(
    "answers a %s read 504 ERRORS.SERVICE_TIMED_OUT at the deadline instead of waiting, and serves it again after",
    async (_what, url) => {
      const timers = h.clock.pendingTimers();
      const release = await holdStore();
      try {
        const pending = call(ADMIN, { method: "GET", url });
        // The read has started waiting on its deadline; just before it, nothing is answered yet.
        await eventually(() => expect(h.clock.pendingTimers()).toBe(timers + 1));
        let answered = false;
        void pending.then(() => {
          answered = true;
        });
        h.clock.advance(READ_TIMEOUT_MS - 1);
        await new Promise((r) => setImmediate(r));
        expect(answered).toBe(false);
        h.clock.advance(1);
        const res = await pending;
        expectError(res, 504, "ERRORS.SERVICE_TIMED_OUT");
        expect(res.json().error_message).not.toMatch(/select|lock|sql/i);
      } finally {
        await release();
      }
      const res = await call(ADMIN, { method: "GET", url });
      expect(res.statusCode, res.body).toBe(200);
      // A read that answers in time leaves no deadline behind.
      expect(h.clock.pendingTimers()).toBe(timers);
    },
  );
});

describe("external users (riders)", () => {
  beforeEach(() => fresh());
  afterEach(() => h.close());

  it("answers every whitelist route 403 to a rider's token, before any lookup, changing nothing", async () => {
    const before = await rows();
    const requests: InjectOptions[] = [
      { method: "GET", url: "/whitelist/v1/whitelists" },
      { method: "GET", url: locationUrl(WL) },
      ...[STAFF, UNKNOWN].flatMap((id): InjectOptions[] => [
        { method: "GET", url: listUrl(id) },
        { method: "GET", url: entitiesUrl(id) },
        { method: "GET", url: targetsUrl(id) },
        { method: "POST", url: entitiesUrl(id), payload: { operation: "ADD", entities: [card("0a0a")] } },
        { method: "POST", url: targetsUrl(id), payload: { operation: "ADD", targets: [device(NORTH)] } },
      ]),
    ];
    for (const req of requests) expectError(await call(RIDER, req), 403, "ERRORS.FORBIDDEN");
    expect(await rows()).toEqual(before);
  });
});

describe("the site manifest's whitelists", () => {
  beforeEach(() => fresh());
  afterEach(() => h.close());

  const declared: ListInput = [
    {
      id: SPARE[3] as string,
      name: "Night shift",
      description: "Doors and the gateway",
      keys_only: false,
      targets: [
        { location: "WM" },
        { location: "WL", device: "door-south" },
        { location: "WL", device: "gw-wl" },
      ],
      entities: [
        { id: "0a0a", status: "INACTIVE", comment: "spare" },
        { id: "0b0b", expires_at: "2026-02-01T00:00:00Z", is_master_key: true },
      ],
    },
  ];
  const apply = async (lists: ListInput) =>
    applyManifest(h.db, SiteManifest.parse(await siteManifest(lists)), h.clock);

  it("declares whitelists with their targets (a location, a device alias, a gateway's GUARD) and cards; re-applying writes nothing", async () => {
    const first = await apply(declared);
    expect(first.created + first.updated).toBeGreaterThan(0);
    const list = SPARE[3] as string;
    const w = await call(ADMIN, { method: "GET", url: listUrl(list) });
    expect(w.json()).toEqual({
      name: "Night shift",
      description: "Doors and the gateway",
      id: list,
      uri: listUrl(list),
    });
    expect((await targets(list)).map((t) => [t.id_type, t.id, t.keys_only]).sort()).toEqual(
      [
        ["device", GUARD_WL, false],
        ["device", SOUTH, false],
        ["location", WM, false],
      ].sort(),
    );
    expect(await entities(list)).toEqual([
      {
        id: "0a0a",
        id_type: "rfid",
        status: "INACTIVE",
        expires_at: "",
        is_master_key: false,
        comment: "spare",
        created_at: now(),
      },
      {
        id: "0b0b",
        id_type: "rfid",
        status: "ACTIVE",
        expires_at: "2026-02-01T00:00:00.000Z",
        is_master_key: true,
        comment: "",
        created_at: now(),
      },
    ]);
    const before = await rows();
    h.clock.advance(HOUR);
    expect(await apply(declared)).toEqual({ created: 0, updated: 0 });
    expect(await rows()).toEqual(before);
  });

  it("keeps cards and targets added through the API, and sets declared cards back to what the manifest says", async () => {
    await apply(declared);
    const list = SPARE[3] as string;
    await ok(postEntities(list, "ADD", [card("0a0a", { comment: "changed" }), card("0c0c")]));
    await ok(postTargets(list, "ADD", [device(NORTH)]));
    const again = await apply(declared);
    expect(again).toEqual({ created: 0, updated: 1 });
    expect((await entities(list)).map((e) => [e.id, e.status, e.comment])).toEqual([
      ["0a0a", "INACTIVE", "spare"],
      ["0b0b", "ACTIVE", ""],
      ["0c0c", "ACTIVE", ""],
    ]);
    expect((await targets(list, "?type=device")).map((t) => t.id).sort()).toEqual(
      [GUARD_WL, NORTH, SOUTH].sort(),
    );
  });

  it("names unknown location codes and device aliases, duplicate cards and ids, and a device over the limit", async () => {
    const m = SiteManifest.parse(
      await siteManifest([
        {
          id: SPARE[0] as string,
          name: "Broken",
          targets: [{ location: "WX" }, { location: "WL", device: "door-nort" }],
          entities: [{ id: "0a0a" }, { id: "0a0a" }],
        },
        { id: SPARE[0] as string, name: "Twin" },
        ...[1, 2, 3, 4].map((n) => ({
          id: `5d5d5d5d-0000-4000-8000-00000000000${n}`,
          name: `Door list ${n}`,
          targets: [{ location: "WL", device: "door-north" }],
        })),
      ]),
    );
    const problems = checkManifest(m);
    expect(problems).toEqual(
      expect.arrayContaining([
        expect.stringMatching(
          /whitelist Broken: targets\[0\]\.location: no location with code WX in this operator/,
        ),
        expect.stringMatching(
          /whitelist Broken: targets\[1\]\.device: no device with alias door-nort at location WL.*door-north/,
        ),
        expect.stringMatching(/whitelist Broken: entities\[1\]\.id: duplicate card id in this whitelist/),
        expect.stringMatching(/whitelist Twin: id: duplicate whitelist id/),
        expect.stringMatching(
          /whitelist "Door list 4": targets\[0\]\.device: device door-north at location WL would be the target of more than 3 whitelists/,
        ),
      ]),
    );
    expect(problems.join("\n")).not.toContain("0a0a");
    await expect(applyManifest(h.db, m, h.clock)).rejects.toThrow(/no location with code WX/);
    // Unknown keys get a suggestion; a malformed card id is refused, not normalised.
    const { problems: raw } = findProblems({
      version: 1,
      operators: [
        {
          id: OP_A,
          name: "A",
          whitelists: [
            {
              id: STAFF,
              name: "S",
              keys_onyl: true,
              targets: [{ locaton: "WL" }],
              entities: [{ id: "04:A1" }],
            },
          ],
        },
      ],
    });
    const messages = raw.map((p) => `${p.path.join(".")}: ${p.message}`);
    expect(messages).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/whitelists\.0\.keys_onyl: unknown key.*keys_only/),
        expect.stringMatching(/whitelists\.0\.targets\.0\.locaton: unknown key.*location/),
        expect.stringMatching(/whitelists\.0\.entities\.0\.id: .*lowercase hexadecimal/),
      ]),
    );
  });

  it("refuses a whitelist id that is another operator's", async () => {
    const m = SiteManifest.parse(await siteManifest([{ id: B_LIST, name: "Taken" }]));
    await expect(applyManifest(h.db, m, h.clock)).rejects.toThrow(/another operator's whitelist/);
    const res = await call(OTHER, { method: "GET", url: listUrl(B_LIST) });
    expect(res.json().name).toBe("B members");
  });
});
