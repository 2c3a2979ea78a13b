import type { InjectOptions, LightMyRequestResponse } from "fastify";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { applyPendingInvites } from "../../cloud/access-lists/invites.ts";
import { createTokenIssuer } from "../../cloud/auth/tokens.ts";
import { applyManifest, checkManifest, derivedId } from "../../cloud/manifest/apply-manifest.ts";
import { loadManifest } from "../../cloud/manifest/load-manifest.ts";
import { findProblems } from "../../cloud/manifest/manifest-problems.ts";
import { type ManifestInput, SiteManifest } from "../../cloud/manifest/manifest-schema.ts";
import { userRepository } from "../../cloud/users/user-repository.ts";
import { DEMO_MANIFEST, demoAccessLists } from "../../demo/demo.ts";
import { AccessListMemberList } from "../../shared/api/access-list.ts";
import { PERMISSIONS, type Permission } from "../../shared/api/permissions.ts";
import { INVITE_LIFETIME_MS } from "../../shared/domain/membership.ts";
import {
  type CloudHarness,
  fixtureSecretHash,
  ISSUER,
  startCloudHarness,
  TOKEN_SECRET,
} from "../support/cloud-harness.ts";
import { CLIENTS, OP_A, OP_B } from "../support/fixture-site.ts";
import { declareExternalUsers } from "../support/riders.ts";
import { VerificationServer } from "../support/verification-server.ts";

/** Lists of operator A at location AC, and one of operator B at BC (fixed ids, as a manifest declares them). */
const PAID = "a1a1a1a1-0000-4000-8000-00000000000a";
const CLOSED = "a1a1a1a1-0000-4000-8000-00000000000c";
const PASSWORD = "a1a1a1a1-0000-4000-8000-00000000000d";
const B_LIST = "b1b1b1b1-0000-4000-8000-00000000000b";
const UNKNOWN_LIST = "99999999-0000-4000-8000-000000000009";
const LISTS = [PAID, CLOSED, PASSWORD];

/** Riders (external users): id = service_user_id. */
const R1 = "11111111-1111-4111-8111-111111111111";
const R2 = "22222222-2222-4222-8222-222222222222";
const R3 = "33333333-3333-4333-8333-333333333333";
const RB = "bbbbbbbb-1111-4111-8111-111111111111";
const R1_PHONE = "+31612345671";
const R3_PHONE = "+31612345673";
const NOBODY_PHONE = "+447911123456";

const DAY = 24 * 3600_000;
const MEMBER_KEYS = [
  "comment",
  "expires_at",
  "external_id",
  "joined_at",
  "phone_number",
  "status",
  "user_id",
];
const PAID_KEYS = [...MEMBER_KEYS, "next_payment_at", "payment_period", "recurring_payment"].sort();
const DEVICES = 40;

const ac = derivedId(OP_A, "location", "AC");
const bc = derivedId(OP_B, "location", "BC");
const deviceAt = (location: string, alias: string) => derivedId(location, "device", alias);

type Lists = { id: string; kind: "paid" | "closed" | "password"; name: string }[];

/** Operator A's location AC with the given lists and operator B's BC with its own, on top of the fixture. */
async function siteManifest(acLists: Lists): Promise<ManifestInput> {
  const secret = { secret_hash: await fixtureSecretHash() };
  const lockers = Array.from({ length: DEVICES }, (_, i) => ({
    alias: String(i + 1),
    type: "LOCKER" as const,
  }));
  return {
    version: 1,
    operators: [
      {
        id: OP_A,
        name: "Operator A",
        locations: [
          {
            code: "AC",
            label: "Access-controlled lockers",
            type: "BIKE_LOCKERS",
            latitude: 52.1,
            longitude: 4.1,
            attrs: { max_user_sessions: 100 },
            access_lists: acLists,
            gateways: [{ id: "gw-ac", ...secret, devices: lockers }],
          },
        ],
      },
      {
        id: OP_B,
        name: "Operator B",
        locations: [
          {
            code: "BC",
            label: "B access lockers",
            type: "BIKE_LOCKERS",
            latitude: 52.2,
            longitude: 4.2,
            access_lists: [{ id: B_LIST, kind: "closed", name: "B residents" }],
            gateways: [{ id: "gw-bc", ...secret, devices: [{ alias: "1", type: "LOCKER" }] }],
          },
        ],
      },
    ],
  };
}

const ALL_LISTS: Lists = [
  { id: PAID, kind: "paid", name: "Subscribers" },
  { id: CLOSED, kind: "closed", name: "Residents" },
  { id: PASSWORD, kind: "password", name: "Guests" },
];

let h: CloudHarness;
let nextDevice = 0;

async function fresh() {
  h = await startCloudHarness();
  nextDevice = 0;
  await applyManifest(h.db, SiteManifest.parse(await siteManifest(ALL_LISTS)), h.clock);
  const createdAt = h.clock.now().toISOString();
  const users = userRepository(h.db);
  for (const u of [
    { id: R1, operatorId: OP_A, userId: "app-user-1", phoneNumber: R1_PHONE },
    { id: R2, operatorId: OP_A, userId: "app-user-2", phoneNumber: null },
    { id: R3, operatorId: OP_A, userId: "app-user-3", phoneNumber: null },
    { id: RB, operatorId: OP_B, userId: "b-user-1", phoneNumber: NOBODY_PHONE },
  ])
    await users.insert(u, createdAt);
}

/** Tokens are minted at the fake clock's now, so they stay valid however far a test moves time. */
const issuer = () => createTokenIssuer({ secret: TOKEN_SECRET, issuer: ISSUER, clock: h.clock });
const CLIENT_OPS: Record<string, { op: string; perms: readonly Permission[] }> = {
  [CLIENTS.admin]: { op: OP_A, perms: PERMISSIONS },
  [CLIENTS.basic]: { op: OP_A, perms: [] },
  [CLIENTS.other]: { op: OP_B, perms: PERMISSIONS },
};
type Caller = { client: string } | { rider: string; op?: string };
const ADMIN: Caller = { client: CLIENTS.admin };
const OTHER_OPERATOR: Caller = { client: CLIENTS.other };

function tokenOf(as: Caller): Promise<string> {
  if ("client" in as) {
    const c = CLIENT_OPS[as.client] as { op: string; perms: readonly Permission[] };
    return issuer().issue({ id: as.client, operatorId: c.op, permissions: c.perms });
  }
  return issuer().issueUser({ id: as.rider, operatorId: as.op ?? OP_A });
}

async function call(as: Caller, opts: InjectOptions): Promise<LightMyRequestResponse> {
  return h.app.inject({
    ...opts,
    headers: { ...(opts.headers ?? {}), authorization: `Bearer ${await tokenOf(as)}` },
  });
}

const usersUrl = (list: string) => `/access-control/v1/mgmt/access-lists/${list}/users`;
const removeUrl = (list: string) => `/access-control/v1/mgmt/access-lists/${list}/remove-user`;

const add = (list: string, payload: Record<string, unknown>, as: Caller = ADMIN) =>
  call(as, { method: "POST", url: usersUrl(list), payload });
const remove = (list: string, payload: Record<string, unknown>, as: Caller = ADMIN) =>
  call(as, { method: "POST", url: removeUrl(list), payload });

async function ok(res: Promise<LightMyRequestResponse>) {
  const r = await res;
  expect(r.statusCode, r.body).toBe(204);
  expect(r.body).toBe("");
}

async function members(list: string) {
  const res = await call(ADMIN, { method: "GET", url: usersUrl(list) });
  expect(res.statusCode, res.body).toBe(200);
  const body = res.json();
  expect(body.uri).toBe(usersUrl(list));
  return AccessListMemberList.parse(body).data;
}

async function member(list: string, key: { user_id?: string; phone_number?: string }) {
  const found = (await members(list)).find((m) =>
    key.user_id ? m.user_id === key.user_id : m.phone_number === key.phone_number,
  );
  if (!found) throw new Error(`no member ${JSON.stringify(key)} in ${list}`);
  return found;
}

function expectError(res: LightMyRequestResponse, status: number, code: string, message?: RegExp) {
  expect(res.statusCode, res.body).toBe(status);
  const body = res.json();
  expect(Object.keys(body).sort()).toEqual(["correlation_id", "error_code", "error_message", "status_code"]);
  expect(body).toMatchObject({ status_code: status, error_code: code });
  expect(body.correlation_id).toBe(res.headers["x-correlation-id"]);
  if (message) expect(body.error_message).toMatch(message);
}

/** A lock or book at AC on a device nobody has used yet. */
function command(as: Caller, name: "lock" | "book", extra: Record<string, unknown> = {}, location = ac) {
  const device = deviceAt(location, String(++nextDevice));
  return call(as, {
    method: "POST",
    url: `/device/v1/devices/${device}/commands`,
    payload: { command: name, ...extra },
  });
}

const now = () => h.clock.now().toISOString();
const later = (ms: number) => new Date(h.clock.now().getTime() + ms).toISOString();

describe("access lists: members, invites and removal", () => {
  beforeEach(fresh);
  afterEach(() => h.close());

  it("an empty list answers {data: [], uri}", async () => {
    const res = await call(ADMIN, { method: "GET", url: usersUrl(CLOSED) });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ data: [], uri: usersUrl(CLOSED) });
  });

  it("adds a user by user_id: included:active at once, with the member fields of the spec", async () => {
    await ok(add(CLOSED, { user_id: R2, comment: "flat 4", external_id: "crm-42" }));
    const data = await members(CLOSED);
    expect(data).toEqual([
      {
        user_id: R2,
        phone_number: "",
        status: "included:active",
        joined_at: now(),
        expires_at: "",
        comment: "flat 4",
        external_id: "crm-42",
      },
    ]);
    expect(Object.keys(data[0] ?? {}).sort()).toEqual([...MEMBER_KEYS].sort());
  });

  it("accepts the user_id in any case (UUIDs compare case-insensitively)", async () => {
    await ok(add(CLOSED, { user_id: R2.toUpperCase() }));
    expect((await members(CLOSED)).map((m) => m.user_id)).toEqual([R2]);
  });

  it("needs exactly one of user_id and phone_number, on add and on remove", async () => {
    for (const send of [add, remove]) {
      expectError(
        await send(CLOSED, { user_id: R1, phone_number: R1_PHONE }),
        400,
        "ERRORS.VALIDATION_FAILED",
        /exactly one of user_id and phone_number/,
      );
      expectError(await send(CLOSED, { comment: "nobody" }), 400, "ERRORS.VALIDATION_FAILED", /exactly one/);
      expectError(await send(CLOSED, {}), 400, "ERRORS.VALIDATION_FAILED", /exactly one/);
    }
    expect(await members(CLOSED)).toEqual([]);
  });

  it("validates phone numbers as E.164, with the E.164 spelling as a hint", async () => {
    for (const send of [add, remove]) {
      expectError(
        await send(CLOSED, { phone_number: "0612345678" }),
        400,
        "ERRORS.VALIDATION_FAILED",
        /E\.164/,
      );
      expectError(
        await send(CLOSED, { phone_number: "+31 6 12345678" }),
        400,
        "ERRORS.VALIDATION_FAILED",
        /body\.phone_number: .*did you mean \+31612345678/,
      );
      expectError(
        await send(CLOSED, { phone_number: "+3161234567" }),
        400,
        "ERRORS.VALIDATION_FAILED",
        /not a valid phone number/,
      );
      expectError(await send(CLOSED, { phone_number: 31612345678 }), 400, "ERRORS.VALIDATION_FAILED");
    }
  });

  it("refuses malformed fields and unknown ones", async () => {
    expectError(
      await add(CLOSED, { user_id: "not-a-uuid" }),
      400,
      "ERRORS.VALIDATION_FAILED",
      /body\.user_id/,
    );
    expectError(await add(PAID, { user_id: R1, payment_period: "year" }), 400, "ERRORS.VALIDATION_FAILED");
    expectError(await add(PAID, { user_id: R1, recurring_payment: "yes" }), 400, "ERRORS.VALIDATION_FAILED");
    expectError(
      await add(CLOSED, { user_id: R1, role: "admin" }),
      400,
      "ERRORS.VALIDATION_FAILED",
      /body\.role/,
    );
    expectError(await remove(PAID, { user_id: R1, remove_now: "true" }), 400, "ERRORS.VALIDATION_FAILED");
  });

  it("a user_id that is no user of the operator is a 400, another operator's user included", async () => {
    expectError(
      await add(CLOSED, { user_id: "44444444-4444-4444-8444-444444444444" }),
      400,
      "ERRORS.UNKNOWN_USER",
      /user_id/,
    );
    expectError(await add(CLOSED, { user_id: RB }), 400, "ERRORS.UNKNOWN_USER");
    expect(await members(CLOSED)).toEqual([]);
  });

  it("a phone number of an existing user adds that user at once", async () => {
    await ok(add(CLOSED, { phone_number: R1_PHONE, comment: "by phone" }));
    expect(await members(CLOSED)).toEqual([
      expect.objectContaining({
        user_id: R1,
        phone_number: "",
        status: "included:active",
        comment: "by phone",
      }),
    ]);
  });

  it("a phone number nobody has yet is an invite that expires after 30 days; adding it again renews it", async () => {
    await ok(add(CLOSED, { phone_number: NOBODY_PHONE, comment: "new neighbour", external_id: "inv-1" }));
    const invite = {
      user_id: "",
      phone_number: NOBODY_PHONE,
      status: "invited",
      joined_at: "",
      expires_at: later(INVITE_LIFETIME_MS),
      comment: "new neighbour",
      external_id: "inv-1",
    };
    expect(await members(CLOSED)).toEqual([invite]);
    // Another operator's user with this number does not count: the invite is for operator A's users.
    h.clock.advance(INVITE_LIFETIME_MS - 1);
    expect((await member(CLOSED, { phone_number: NOBODY_PHONE })).status).toBe("invited");
    h.clock.advance(1);
    expect(await member(CLOSED, { phone_number: NOBODY_PHONE })).toEqual({
      ...invite,
      status: "excluded:expired",
    });
    await ok(add(CLOSED, { phone_number: NOBODY_PHONE }));
    const renewed = await member(CLOSED, { phone_number: NOBODY_PHONE });
    expect(renewed.status).toBe("invited");
    expect(renewed.expires_at).toBe(later(INVITE_LIFETIME_MS));
  });

  it("invites are applied at sign-in: the member joins with the invite's terms, comment and external_id", async () => {
    await ok(
      add(PAID, {
        phone_number: R3_PHONE,
        payment_period: "week",
        recurring_payment: false,
        comment: "invited",
        external_id: "inv-7",
      }),
    );
    await ok(add(CLOSED, { phone_number: R3_PHONE }));
    h.clock.advance(DAY);
    // Sign-in learns the phone number and applies the invites.
    await userRepository(h.db).setPhoneNumber(
      { id: R3, operatorId: OP_A, userId: "app-user-3", phoneNumber: null },
      R3_PHONE,
    );
    await applyPendingInvites(
      { db: h.db, clock: h.clock },
      { id: R3, operatorId: OP_A, phoneNumber: R3_PHONE },
    );
    expect(await members(PAID)).toEqual([
      {
        user_id: R3,
        phone_number: "",
        status: "included:active",
        joined_at: now(),
        expires_at: later(7 * DAY),
        payment_period: "week",
        recurring_payment: false,
        next_payment_at: "",
        comment: "invited",
        external_id: "inv-7",
      },
    ]);
    expect(await members(CLOSED)).toEqual([
      expect.objectContaining({ user_id: R3, phone_number: "", status: "included:active" }),
    ]);
    // Used up: a second sign-in changes nothing.
    await applyPendingInvites(
      { db: h.db, clock: h.clock },
      { id: R3, operatorId: OP_A, phoneNumber: R3_PHONE },
    );
    expect(await members(CLOSED)).toHaveLength(1);
  });

  it("an expired invite, another operator's user and a user without a phone number join nothing", async () => {
    await ok(add(CLOSED, { phone_number: R3_PHONE }));
    await applyPendingInvites({ db: h.db, clock: h.clock }, { id: R2, operatorId: OP_A, phoneNumber: null });
    await applyPendingInvites(
      { db: h.db, clock: h.clock },
      { id: RB, operatorId: OP_B, phoneNumber: R3_PHONE },
    );
    expect((await members(CLOSED)).map((m) => m.status)).toEqual(["invited"]);
    h.clock.advance(INVITE_LIFETIME_MS);
    await applyPendingInvites(
      { db: h.db, clock: h.clock },
      { id: R3, operatorId: OP_A, phoneNumber: R3_PHONE },
    );
    expect(await members(CLOSED)).toEqual([
      expect.objectContaining({ user_id: "", phone_number: R3_PHONE, status: "excluded:expired" }),
    ]);
  });

  it("an invite meeting a current membership leaves the membership as it is", async () => {
    await ok(add(CLOSED, { user_id: R3, comment: "resident", external_id: "crm-3" }));
    await ok(add(CLOSED, { phone_number: R3_PHONE, comment: "invite", external_id: "inv-3" }));
    await applyPendingInvites(
      { db: h.db, clock: h.clock },
      { id: R3, operatorId: OP_A, phoneNumber: R3_PHONE },
    );
    expect(await members(CLOSED)).toEqual([
      expect.objectContaining({ user_id: R3, comment: "resident", external_id: "crm-3" }),
    ]);
  });

  it("paid lists: payment_period, recurring_payment and next_payment_at; month and recurring by default", async () => {
    await ok(add(PAID, { user_id: R1, payment_period: "week", recurring_payment: true }));
    await ok(add(PAID, { user_id: R2 }));
    const [r1, r2] = [await member(PAID, { user_id: R1 }), await member(PAID, { user_id: R2 })];
    expect(Object.keys(r1).sort()).toEqual(PAID_KEYS);
    expect(r1).toMatchObject({
      status: "included:active",
      payment_period: "week",
      recurring_payment: true,
      next_payment_at: later(7 * DAY),
      expires_at: "",
    });
    expect(r2).toMatchObject({
      payment_period: "month",
      recurring_payment: true,
      next_payment_at: "2026-02-15T10:00:00.000Z",
    });
    // A renewing membership runs on: the next payment moves a period on.
    h.clock.advance(7 * DAY);
    expect((await member(PAID, { user_id: R1 })).next_payment_at).toBe(later(7 * DAY));
  });

  it("closed and password lists ignore payment_period and recurring_payment", async () => {
    for (const list of [CLOSED, PASSWORD]) {
      await ok(add(list, { user_id: R1, payment_period: "day", recurring_payment: false }));
      const m = await member(list, { user_id: R1 });
      expect(Object.keys(m).sort()).toEqual([...MEMBER_KEYS].sort());
      h.clock.advance(2 * DAY);
      expect((await member(list, { user_id: R1 })).status).toBe("included:active");
    }
  });

  it("a paid membership that does not renew expires at the end of its period: excluded:expired", async () => {
    await ok(add(PAID, { user_id: R1, payment_period: "day", recurring_payment: false }));
    expect(await member(PAID, { user_id: R1 })).toMatchObject({
      status: "included:active",
      expires_at: later(DAY),
      next_payment_at: "",
    });
    h.clock.advance(DAY - 1);
    expect((await member(PAID, { user_id: R1 })).status).toBe("included:active");
    h.clock.advance(1);
    expect((await member(PAID, { user_id: R1 })).status).toBe("excluded:expired");
  });

  it("removing from a paid list takes effect at the end of the current period: included:cancelled until then", async () => {
    await ok(add(PAID, { user_id: R1, payment_period: "week" }));
    h.clock.advance(2 * DAY);
    await ok(remove(PAID, { user_id: R1 }));
    const periodEnd = later(5 * DAY);
    expect(await member(PAID, { user_id: R1 })).toMatchObject({
      status: "included:cancelled",
      expires_at: periodEnd,
      next_payment_at: "",
    });
    h.clock.advance(5 * DAY - 1);
    expect((await member(PAID, { user_id: R1 })).status).toBe("included:cancelled");
    h.clock.advance(1);
    expect(await member(PAID, { user_id: R1 })).toMatchObject({
      status: "excluded:removed",
      expires_at: periodEnd,
    });
  });

  it("remove_now removes from a paid list at once, also after a removal at the period end", async () => {
    await ok(add(PAID, { user_id: R1 }));
    await ok(add(PAID, { user_id: R2 }));
    await ok(remove(PAID, { user_id: R1, remove_now: true }));
    expect(await member(PAID, { user_id: R1 })).toMatchObject({
      status: "excluded:removed",
      expires_at: now(),
    });
    await ok(remove(PAID, { user_id: R2 }));
    expect((await member(PAID, { user_id: R2 })).status).toBe("included:cancelled");
    await ok(remove(PAID, { user_id: R2, remove_now: true }));
    expect((await member(PAID, { user_id: R2 })).status).toBe("excluded:removed");
  });

  it("closed and password lists remove at once, whatever remove_now says", async () => {
    for (const list of [CLOSED, PASSWORD]) {
      await ok(add(list, { user_id: R1 }));
      await ok(add(list, { user_id: R2 }));
      await ok(remove(list, { user_id: R1, remove_now: false }));
      await ok(remove(list, { user_id: R2 }));
      expect((await members(list)).map((m) => [m.user_id, m.status, m.expires_at])).toEqual([
        [R1, "excluded:removed", now()],
        [R2, "excluded:removed", now()],
      ]);
    }
  });

  it("a phone number removes the member who has it, and cancels a pending invite at once (also on paid lists)", async () => {
    await ok(add(PAID, { user_id: R1 }));
    await ok(add(PAID, { phone_number: NOBODY_PHONE }));
    await ok(remove(PAID, { phone_number: NOBODY_PHONE, remove_now: false }));
    expect((await members(PAID)).map((m) => m.phone_number)).toEqual([""]);
    await ok(remove(PAID, { phone_number: R1_PHONE, remove_now: true }));
    expect((await member(PAID, { user_id: R1 })).status).toBe("excluded:removed");
  });

  it("removing someone who is neither a member nor invited is a 400; removing a removed member again is a 204", async () => {
    expectError(await remove(CLOSED, { user_id: R1 }), 400, "ERRORS.NOT_A_MEMBER", /user_id/);
    expectError(
      await remove(CLOSED, { phone_number: NOBODY_PHONE }),
      400,
      "ERRORS.NOT_A_MEMBER",
      /phone_number/,
    );
    await ok(add(CLOSED, { user_id: R1 }));
    await ok(remove(CLOSED, { user_id: R1 }));
    await ok(remove(CLOSED, { user_id: R1 }));
    expect((await member(CLOSED, { user_id: R1 })).status).toBe("excluded:removed");
  });

  it("external_id cannot change: a second add with another one is a 400, the same one or none is fine", async () => {
    await ok(add(CLOSED, { user_id: R1, external_id: "crm-1", comment: "first" }));
    expectError(
      await add(CLOSED, { user_id: R1, external_id: "crm-2" }),
      400,
      "ERRORS.EXTERNAL_ID_IMMUTABLE",
      /external_id/,
    );
    await ok(add(CLOSED, { user_id: R1, external_id: "crm-1" }));
    await ok(add(CLOSED, { user_id: R1, comment: "second" }));
    expect(await member(CLOSED, { user_id: R1 })).toMatchObject({ external_id: "crm-1", comment: "second" });
    // A member added without one cannot get one later.
    await ok(add(CLOSED, { user_id: R2 }));
    expectError(await add(CLOSED, { user_id: R2, external_id: "late" }), 400, "ERRORS.EXTERNAL_ID_IMMUTABLE");
    // Nor can an invite's.
    await ok(add(CLOSED, { phone_number: NOBODY_PHONE, external_id: "inv-1" }));
    expectError(
      await add(CLOSED, { phone_number: NOBODY_PHONE, external_id: "inv-2" }),
      400,
      "ERRORS.EXTERNAL_ID_IMMUTABLE",
    );
    expect((await member(CLOSED, { phone_number: NOBODY_PHONE })).external_id).toBe("inv-1");
  });

  it("adding a current member again keeps joined_at, updates the comment and withdraws a removal at the period end", async () => {
    const joined = now();
    await ok(add(PAID, { user_id: R1, comment: "a" }));
    h.clock.advance(DAY);
    await ok(remove(PAID, { user_id: R1 }));
    expect((await member(PAID, { user_id: R1 })).status).toBe("included:cancelled");
    await ok(add(PAID, { user_id: R1, comment: "b" }));
    expect(await member(PAID, { user_id: R1 })).toMatchObject({
      status: "included:active",
      joined_at: joined,
      comment: "b",
      expires_at: "",
      next_payment_at: "2026-02-15T10:00:00.000Z",
    });
  });

  it("new payment terms of a current member start when the running period ends", async () => {
    await ok(add(PAID, { user_id: R1, payment_period: "week" }));
    h.clock.advance(DAY);
    await ok(add(PAID, { user_id: R1, payment_period: "day", recurring_payment: false }));
    expect(await member(PAID, { user_id: R1 })).toMatchObject({
      status: "included:active",
      payment_period: "day",
      recurring_payment: false,
      expires_at: later(6 * DAY),
    });
  });

  it("a removed member added again starts a new membership (a new joined_at and external_id)", async () => {
    await ok(add(CLOSED, { user_id: R1, external_id: "old" }));
    await ok(remove(CLOSED, { user_id: R1 }));
    h.clock.advance(DAY);
    await ok(add(CLOSED, { user_id: R1, external_id: "new" }));
    expect(await member(CLOSED, { user_id: R1 })).toMatchObject({
      status: "included:active",
      joined_at: now(),
      external_id: "new",
      comment: "",
    });
  });

  it("a retried removal with the same Idempotency-Key answers as the first time", async () => {
    await ok(add(CLOSED, { phone_number: NOBODY_PHONE }));
    const again = () =>
      call(ADMIN, {
        method: "POST",
        url: removeUrl(CLOSED),
        headers: { "idempotency-key": "remove-1" },
        payload: { phone_number: NOBODY_PHONE },
      });
    expect((await again()).statusCode).toBe(204);
    const retry = await again();
    expect(retry.statusCode).toBe(204);
    expect(retry.headers["idempotent-replayed"]).toBe("true");
    expectError(await remove(CLOSED, { phone_number: NOBODY_PHONE }), 400, "ERRORS.NOT_A_MEMBER");
  });

  it("lists joined members first, then invites", async () => {
    await ok(add(CLOSED, { phone_number: NOBODY_PHONE }));
    await ok(add(CLOSED, { user_id: R2 }));
    expect((await members(CLOSED)).map((m) => m.user_id || m.phone_number)).toEqual([R2, NOBODY_PHONE]);
  });
});

describe("access lists: an invite applied through sign-in", () => {
  const server = new VerificationServer();
  beforeAll(async () => {
    await server.start();
    await fresh();
    await declareExternalUsers(h, { operatorId: OP_A, base: server.url, allowPrivateAddresses: true });
  });
  afterAll(async () => {
    await h.close();
    await server.stop();
  });

  it("the sign-in answer's phone number turns the invite into a membership, and the rider may lock", async () => {
    const phone = "+31612345679";
    await ok(add(CLOSED, { phone_number: phone, comment: "welcome" }));
    const auth = (path: string, payload: Record<string, unknown>) =>
      h.app.inject({ method: "POST", url: `/external-users-auth/v1/${path}`, payload });
    const up = await auth("sign-up", { user_id: "newcomer", operator_id: OP_A });
    expect(up.statusCode, up.body).toBe(204);
    const newcomer = await userRepository(h.db).findByUserId(OP_A, "newcomer");
    if (!newcomer) throw new Error("the sign-up made no user");
    const { id } = newcomer;
    server.behave("/sign-in", { status: 200, body: { service_user_id: id, phone_number: phone } });
    const res = await auth("sign-in", { service_user_id: id, operator_id: OP_A, challenge_token: "nonce-1" });
    expect(res.statusCode, res.body).toBe(200);
    expect(await members(CLOSED)).toEqual([
      expect.objectContaining({
        user_id: id,
        phone_number: "",
        status: "included:active",
        comment: "welcome",
      }),
    ]);
    const token = (res.json() as { access_token: string }).access_token;
    const lock = await h.app.inject({
      method: "POST",
      url: `/device/v1/devices/${deviceAt(ac, "1")}/commands`,
      headers: { authorization: `Bearer ${token}` },
      payload: { command: "lock" },
    });
    expect(lock.statusCode, lock.body).toBe(200);
  });
});

describe("access lists: tenancy and callers", () => {
  beforeAll(fresh);
  afterAll(() => h.close());

  const routes = (list: string): InjectOptions[] => [
    { method: "GET", url: usersUrl(list) },
    { method: "POST", url: usersUrl(list), payload: { user_id: R1 } },
    { method: "POST", url: removeUrl(list), payload: { user_id: R1 } },
  ];

  it("another operator's list, and an unknown one, are not found (404) on every route", async () => {
    for (const list of [...LISTS, UNKNOWN_LIST]) {
      for (const r of routes(list)) expectError(await call(OTHER_OPERATOR, r), 404, "ERRORS.NOT_FOUND");
    }
    for (const r of routes(B_LIST)) expectError(await call(ADMIN, r), 404, "ERRORS.NOT_FOUND");
    for (const r of routes(UNKNOWN_LIST)) expectError(await call(ADMIN, r), 404, "ERRORS.NOT_FOUND");
  });

  it("a rider's token is refused on every route (403), whosever the list", async () => {
    for (const list of [...LISTS, B_LIST, UNKNOWN_LIST]) {
      for (const r of routes(list)) {
        expectError(await call({ rider: R1 }, r), 403, "ERRORS.FORBIDDEN", /external users/);
        expectError(await call({ rider: RB, op: OP_B }, r), 403, "ERRORS.FORBIDDEN");
      }
    }
    expect(await members(CLOSED)).toEqual([]);
  });

  it("a malformed list id is a 400; no token is a 401", async () => {
    for (const r of routes("not-a-uuid")) expectError(await call(ADMIN, r), 400, "ERRORS.VALIDATION_FAILED");
    for (const r of routes(CLOSED)) {
      const res = await h.app.inject(r);
      expectError(res, 401, "ERRORS.UNAUTHORIZED");
    }
  });

  it("any client of the operator manages its lists", async () => {
    await ok(add(CLOSED, { user_id: R1 }, { client: CLIENTS.basic }));
    await ok(remove(CLOSED, { user_id: R1 }, { client: CLIENTS.basic }));
  });
});

describe("access lists: who may lock and book at a location with lists", () => {
  beforeEach(fresh);
  afterEach(() => h.close());

  const accepted = async (res: Promise<LightMyRequestResponse>) => {
    const r = await res;
    expect(r.statusCode, r.body).toBe(200);
  };
  const denied = async (res: Promise<LightMyRequestResponse>) =>
    expectError(await res, 403, "ERRORS.ACCESS_DENIED", /access lists/);

  it("a rider who is no member may neither lock nor book; a member of any of the location's lists may", async () => {
    await denied(command({ rider: R1 }, "lock"));
    await denied(command({ rider: R1 }, "book"));
    await ok(add(PASSWORD, { user_id: R1 }));
    await accepted(command({ rider: R1 }, "lock"));
    await accepted(command({ rider: R1 }, "book"));
    await accepted(command({ rider: R1 }, "lock", { user_id: R1 }));
  });

  it("an invited rider gets access once the invite is applied at sign-in", async () => {
    await ok(add(CLOSED, { phone_number: R3_PHONE }));
    await denied(command({ rider: R3 }, "lock"));
    await applyPendingInvites(
      { db: h.db, clock: h.clock },
      { id: R3, operatorId: OP_A, phoneNumber: R3_PHONE },
    );
    await accepted(command({ rider: R3 }, "lock"));
  });

  it("follows the membership over time: cancelled keeps access until the period ends, then it is gone", async () => {
    await ok(add(PAID, { user_id: R1, payment_period: "day" }));
    h.clock.advance(3_600_000);
    await ok(remove(PAID, { user_id: R1 }));
    await accepted(command({ rider: R1 }, "lock"));
    h.clock.advance(23 * 3_600_000);
    await denied(command({ rider: R1 }, "lock"));
    await denied(command({ rider: R1 }, "book"));
  });

  it("an expired paid membership, and a removal with remove_now, end access", async () => {
    await ok(add(PAID, { user_id: R1, payment_period: "day", recurring_payment: false }));
    await ok(add(PAID, { user_id: R2 }));
    await accepted(command({ rider: R1 }, "lock"));
    h.clock.advance(DAY);
    await denied(command({ rider: R1 }, "book"));
    await ok(remove(PAID, { user_id: R2, remove_now: true }));
    await denied(command({ rider: R2 }, "lock"));
  });

  it("a lock for a user (ACT_ON_BEHALF_OF) checks that user's membership", async () => {
    await ok(add(CLOSED, { user_id: R1 }));
    await accepted(command(ADMIN, "lock", { user_id: R1 }));
    await denied(command(ADMIN, "lock", { user_id: R2 }));
  });

  it("an integrator's back end without a user_id is not checked: it runs its own site", async () => {
    await accepted(command(ADMIN, "lock"));
    await accepted(command(ADMIN, "book"));
  });

  it("a location without access lists is open to every rider", async () => {
    const l1 = derivedId(OP_A, "location", "L1");
    const res = await call(
      { rider: R1 },
      {
        method: "POST",
        url: `/device/v1/devices/${deviceAt(l1, "2")}/commands`,
        payload: { command: "lock" },
      },
    );
    expect(res.statusCode, res.body).toBe(200);
  });

  it("another operator's rider cannot reach the location at all (404, as for any device of another operator)", async () => {
    expectError(await command({ rider: RB, op: OP_B }, "lock"), 404, "ERRORS.NOT_FOUND");
  });

  it("each operator's lists admit that operator's members only", async () => {
    const lockAtBc = (as: Caller) =>
      call(as, {
        method: "POST",
        url: `/device/v1/devices/${deviceAt(bc, "1")}/commands`,
        payload: { command: "lock" },
      });
    await denied(lockAtBc({ rider: RB, op: OP_B }));
    await ok(add(B_LIST, { user_id: RB }, OTHER_OPERATOR));
    expectError(await add(B_LIST, { user_id: R1 }, OTHER_OPERATOR), 400, "ERRORS.UNKNOWN_USER");
    expectError(await lockAtBc({ rider: R1 }), 404, "ERRORS.NOT_FOUND");
    await accepted(lockAtBc({ rider: RB, op: OP_B }));
  });

  it("a location's has_access_lists and access_list_ids tell what is enforced; devices say has_access_lists", async () => {
    const loc = await call(ADMIN, { method: "GET", url: `/location/v1/locations/${ac}` });
    expect(loc.json()).toMatchObject({ has_access_lists: true, access_list_ids: LISTS });
    const dev = await call(ADMIN, { method: "GET", url: `/device/v1/devices/${deviceAt(ac, "1")}` });
    expect(dev.json().has_access_lists).toBe(true);
    const open = await call(ADMIN, {
      method: "GET",
      url: `/location/v1/locations/${derivedId(OP_A, "location", "L1")}`,
    });
    expect(open.json()).toMatchObject({ has_access_lists: false, access_list_ids: [] });
  });
});

describe("access lists in the site manifest", () => {
  beforeEach(fresh);
  afterEach(() => h.close());

  it("a list left out is retired: no longer managed nor enforced, and back with its members when declared again", async () => {
    await ok(add(CLOSED, { user_id: R1 }));
    await applyManifest(
      h.db,
      SiteManifest.parse(await siteManifest([ALL_LISTS[0] as Lists[number]])),
      h.clock,
    );
    expectError(await call(ADMIN, { method: "GET", url: usersUrl(CLOSED) }), 404, "ERRORS.NOT_FOUND");
    const loc = await call(ADMIN, { method: "GET", url: `/location/v1/locations/${ac}` });
    expect(loc.json()).toMatchObject({ has_access_lists: true, access_list_ids: [PAID] });
    // Only the paid list is in force now, and R1 is not on it.
    await denied(command({ rider: R1 }, "lock"));
    await applyManifest(h.db, SiteManifest.parse(await siteManifest([])), h.clock);
    await accepted(command({ rider: R2 }, "lock"));
    await applyManifest(h.db, SiteManifest.parse(await siteManifest(ALL_LISTS)), h.clock);
    expect((await members(CLOSED)).map((m) => [m.user_id, m.status])).toEqual([[R1, "included:active"]]);
    await denied(command({ rider: R2 }, "lock"));
  });

  it("the demo site declares an access list with a fixed id, which the demo's banner prints", () => {
    expect(demoAccessLists(loadManifest(DEMO_MANIFEST))).toEqual([
      {
        id: "5d1c3a70-2f1e-4b8a-9c61-0a7e3b5c4d21",
        kind: "closed",
        name: "Harbour residents",
        location: "HB-H",
      },
    ]);
  });

  it("re-applying an unchanged manifest writes nothing", async () => {
    expect(await applyManifest(h.db, SiteManifest.parse(await siteManifest(ALL_LISTS)), h.clock)).toEqual({
      created: 0,
      updated: 0,
    });
  });

  it("refuses a duplicate list id, unknown keys and another operator's list id", async () => {
    const m = SiteManifest.parse(
      await siteManifest([...ALL_LISTS, { id: PAID, kind: "closed", name: "Again" }]),
    );
    expect(checkManifest(m).join("\n")).toMatch(/access list Again: id: duplicate access list id/);
    const typo = (await siteManifest([{ id: PAID, kind: "paid", name: "Subscribers" }])) as {
      operators: { locations: { access_lists: Record<string, unknown>[] }[] }[];
    };
    const list = typo.operators[0]?.locations[0]?.access_lists[0] as Record<string, unknown>;
    list.kynd = list.kind;
    delete list.kind;
    const { problems } = findProblems(typo);
    expect(problems.map((p) => p.message).join("\n")).toMatch(/unknown key \(did you mean "kind"\?\)/);
    // Operator B's list id declared by operator A (in a manifest of A alone: the store knows whose it is).
    const stolen = await siteManifest([{ id: B_LIST, kind: "closed", name: "Not mine" }]);
    stolen.operators = stolen.operators.slice(0, 1);
    await expect(applyManifest(h.db, SiteManifest.parse(stolen), h.clock)).rejects.toThrow(
      /another operator/,
    );
  });

  const accepted = async (res: Promise<LightMyRequestResponse>) => {
    const r = await res;
    expect(r.statusCode, r.body).toBe(200);
  };
  const denied = async (res: Promise<LightMyRequestResponse>) =>
    expectError(await res, 403, "ERRORS.ACCESS_DENIED");
});
