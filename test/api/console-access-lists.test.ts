import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { auditRepository } from "../../cloud/audit/audit-repository.ts";
import { AccessListMemberList } from "../../shared/api/access-list.ts";
import type { ConsoleAccessList, ConsoleAccessListList } from "../../shared/api/console-access-lists.ts";
import { INVITE_LIFETIME_MS } from "../../shared/domain/membership.ts";
import { type CloudHarness, startCloudHarness } from "../support/cloud-harness.ts";
import {
  type ConsoleStaff,
  consoleRequests,
  expectError,
  type StaffCast,
  signedInCast,
} from "../support/console-api.ts";
import { declareKeysFixture, HOSTILE, KEYS } from "../support/console-keys-fixture.ts";
import { CLIENTS, fx, OP_A, OP_B } from "../support/fixture-site.ts";

const LIST = KEYS.list;
let h: CloudHarness;
let staff: StaffCast;

const usersUrl = (list: string) => `/access-control/v1/mgmt/access-lists/${list}/users`;

/** The members and invites as the public API lists them to operator A's integrator. */
async function publicMembers(): Promise<{ user_id: string; phone_number: string; status: string }[]> {
  const res = await h.call(CLIENTS.admin, { method: "GET", url: usersUrl(LIST) });
  expect(res.statusCode, res.body).toBe(200);
  return AccessListMemberList.parse(res.json()).data.map(({ user_id, phone_number, status }) => ({
    user_id,
    phone_number,
    status,
  }));
}

beforeEach(async () => {
  h = await startCloudHarness();
  await declareKeysFixture(h);
  // Rider A a member, and a phone invite, through the public API.
  for (const payload of [{ user_id: KEYS.riderA }, { phone_number: KEYS.invitedPhone, comment: HOSTILE }]) {
    const res = await h.call(CLIENTS.admin, { method: "POST", url: usersUrl(LIST), payload });
    expect(res.statusCode, res.body).toBe(204);
  }
  staff = await signedInCast(h);
});
afterEach(() => h.close());

const { get, post } = consoleRequests(() => h);

const addMember = (who: ConsoleStaff, body: Record<string, unknown>, list: string = LIST) =>
  post(who, `/console/api/access-lists/${list}/members`, body);
const remove = (who: ConsoleStaff, body: Record<string, unknown>, list: string = LIST) =>
  post(who, `/console/api/access-lists/${list}/remove`, body);

async function page(who: ConsoleStaff, id: string = LIST): Promise<ConsoleAccessList> {
  const res = await get(who, `/console/api/access-lists/${id}`);
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}

const auditOf = () =>
  auditRepository(h.db).list(
    OP_A,
    { subject: { type: "access_list", id: LIST }, actor: { kind: "staff" } },
    { limit: 50 },
  );

describe("the console's access lists", () => {
  it("lists the operator's lists with their counts; a superadmin sees every operator's", async () => {
    const res = await get(staff.viewer, "/console/api/access-lists");
    expect(res.statusCode, res.body).toBe(200);
    expect((res.json() as ConsoleAccessListList).data).toEqual([
      {
        id: LIST,
        operator_id: OP_A,
        name: HOSTILE,
        kind: "closed",
        location_id: fx.location("H1"),
        location: "#H1 House one",
        included: 1,
        members: 1,
        invites: 1,
      },
    ]);
    const all = (await get(staff.superadmin, "/console/api/access-lists")).json() as ConsoleAccessListList;
    expect(all.data.map((l) => l.id).sort()).toEqual([LIST, KEYS.listB].sort());
  });

  it("shows the members and the invites with when they were made and expire", async () => {
    const madeAt = h.clock.now();
    const list = await page(staff.viewer);
    expect(list.members).toEqual([
      expect.objectContaining({
        user_id: KEYS.riderA,
        status: "included:active",
        joined_at: madeAt.toISOString(),
      }),
    ]);
    expect(list.invites).toEqual([
      {
        phone_number: KEYS.invitedPhone,
        status: "invited",
        created_at: madeAt.toISOString(),
        expires_at: new Date(madeAt.getTime() + INVITE_LIFETIME_MS).toISOString(),
        comment: HOSTILE,
        external_id: "",
      },
    ]);
  });

  it("adds, invites, removes and cancels through the access-list service, audited with the staff member", async () => {
    expect((await addMember(staff.operator, { user_id: KEYS.riderB })).statusCode).toBe(204);
    expect((await addMember(staff.operator, { phone_number: "+31612345679" })).statusCode).toBe(204);
    expect((await remove(staff.operator, { user_id: KEYS.riderA })).statusCode).toBe(204);
    expect((await remove(staff.operator, { phone_number: KEYS.invitedPhone })).statusCode).toBe(204);
    expect(await publicMembers()).toEqual([
      { user_id: KEYS.riderA, phone_number: "", status: "excluded:removed" },
      { user_id: KEYS.riderB, phone_number: "", status: "included:active" },
      { user_id: "", phone_number: "+31612345679", status: "invited" },
    ]);
    const entries = await auditOf();
    expect(entries.map((e) => [e.action, e.actor.id, e.changes])).toEqual(
      expect.arrayContaining([
        ["access-list.add", staff.operator.id, { user_id: { from: null, to: KEYS.riderB } }],
        ["access-list.add", staff.operator.id, { phone_number: { from: null, to: "+31612345679" } }],
        ["access-list.remove", staff.operator.id, { user_id: { from: KEYS.riderA, to: null } }],
        ["access-list.remove", staff.operator.id, { phone_number: { from: KEYS.invitedPhone, to: null } }],
      ]),
    );
    expect(entries.every((e) => e.actor.kind === "staff")).toBe(true);
  });

  it("refuses a viewer's actions (403) and changes nothing", async () => {
    const before = await publicMembers();
    expectError(await addMember(staff.viewer, { user_id: KEYS.riderB }), 403, "ERRORS.FORBIDDEN");
    expectError(await remove(staff.viewer, { user_id: KEYS.riderA }), 403, "ERRORS.FORBIDDEN");
    expectError(await remove(staff.viewer, { phone_number: KEYS.invitedPhone }), 403, "ERRORS.FORBIDDEN");
    expect(await publicMembers()).toEqual(before);
    expect(await auditOf()).toEqual([]);
  });

  it("answers another operator's list as a missing one (404) and changes nothing", async () => {
    const before = await publicMembers();
    expectError(await get(staff.otherOperator, `/console/api/access-lists/${LIST}`), 404, "ERRORS.NOT_FOUND");
    expectError(await remove(staff.otherOperator, { user_id: KEYS.riderA }), 404, "ERRORS.NOT_FOUND");
    expectError(await addMember(staff.otherOperator, { user_id: KEYS.riderOfB }), 404, "ERRORS.NOT_FOUND");
    expectError(await get(staff.viewer, `/console/api/access-lists/${KEYS.listB}`), 404, "ERRORS.NOT_FOUND");
    expect(await publicMembers()).toEqual(before);
    expect((await page(staff.superadmin, KEYS.listB)).operator_id).toBe(OP_B);
  });

  it("refuses bad input in the spec's error body and changes nothing", async () => {
    const before = await publicMembers();
    expectError(await addMember(staff.operator, {}), 400, "ERRORS.VALIDATION_FAILED");
    expectError(await addMember(staff.operator, { phone_number: "0612" }), 400, "ERRORS.VALIDATION_FAILED");
    expectError(
      await addMember(staff.operator, { user_id: KEYS.riderB, phone_number: KEYS.invitedPhone }),
      400,
      "ERRORS.VALIDATION_FAILED",
    );
    // Another operator's rider is no user of this operator; someone not on the list cannot be removed.
    expectError(await addMember(staff.operator, { user_id: KEYS.riderOfB }), 400, "ERRORS.UNKNOWN_USER");
    expectError(await remove(staff.operator, { user_id: KEYS.riderB }), 400, "ERRORS.NOT_A_MEMBER");
    expect(await publicMembers()).toEqual(before);
    expect(await auditOf()).toEqual([]);
  });
});
