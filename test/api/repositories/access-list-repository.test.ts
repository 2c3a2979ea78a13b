import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  accessListRepository,
  type InviteRecord,
} from "../../../cloud/access-lists/access-list-repository.ts";
import { derivedId } from "../../../cloud/manifest/apply-manifest.ts";
import { userRepository } from "../../../cloud/users/user-repository.ts";
import { newMembership, removeMembership } from "../../../shared/domain/membership.ts";
import { OP_A, OP_B } from "../../support/fixture-site.ts";
import { seedOperators } from "../../support/seed-operators.ts";
import { openTestDb, type TestDb } from "../../support/test-db.ts";

const PAID = "44444444-0000-4000-8000-000000000001";
const CLOSED = "44444444-0000-4000-8000-000000000002";
const B_LIST = "44444444-0000-4000-8000-000000000003";
const LA = derivedId(OP_A, "location", "LA");
const LB = derivedId(OP_B, "location", "LB");
const U1 = "55555555-0000-4000-8000-000000000001";
const U2 = "55555555-0000-4000-8000-000000000002";
const UB = "55555555-0000-4000-8000-000000000003";
const T0 = new Date("2026-02-01T00:00:00.000Z");
const T1 = new Date("2026-02-02T00:00:00.000Z");
const PHONE = "+3725550001";

let store: TestDb;
let lists: ReturnType<typeof accessListRepository>;

beforeEach(async () => {
  store = await openTestDb();
  await seedOperators(store.db, {
    a: [
      { id: PAID, kind: "paid", name: "Paid" },
      { id: CLOSED, kind: "closed", name: "Closed" },
    ],
    b: [{ id: B_LIST, kind: "closed", name: "B" }],
  });
  const users = userRepository(store.db);
  for (const [id, operatorId] of [
    [U1, OP_A],
    [U2, OP_A],
    [UB, OP_B],
  ] as const)
    await users.insert({ id, operatorId, userId: id, phoneNumber: null }, T0.toISOString());
  lists = accessListRepository(store.db);
});
afterEach(() => store.drop());

const closedMember = (at: Date) => newMembership("closed", {}, at);

describe("accessListRepository: lists", () => {
  it("find sees any list; findLive only the operator's lists in force", async () => {
    expect(await lists.find(B_LIST)).toMatchObject({ id: B_LIST, operator_id: OP_B, location_id: LB });
    expect(await lists.findLive(OP_A, PAID)).toMatchObject({ kind: "paid", name: "Paid", retired_at: null });
    expect(await lists.findLive(OP_A, B_LIST)).toBeUndefined();
    expect(await lists.find("44444444-0000-4000-8000-000000000009")).toBeUndefined();
    await lists.retireAtExcept(LA, [CLOSED], T0.toISOString());
    expect(await lists.findLive(OP_A, PAID)).toBeUndefined();
    expect(await lists.find(PAID)).toMatchObject({ retired_at: T0.toISOString() });
  });

  it("liveIdsAt names the operator's lists in force at the location", async () => {
    expect((await lists.liveIdsAt(OP_A, LA)).sort()).toEqual([PAID, CLOSED].sort());
    expect(await lists.liveIdsAt(OP_B, LA)).toEqual([]);
    expect(await lists.retireAtExcept(LA, [], T0.toISOString())).toBe(2);
    expect(await lists.liveIdsAt(OP_A, LA)).toEqual([]);
    expect(await lists.liveIdsAt(OP_B, LB)).toEqual([B_LIST]);
  });

  it("retireAtExcept counts what it retires; redeclare brings a list back, moved and renamed", async () => {
    expect(await lists.retireAtExcept(LA, [PAID, CLOSED], T0.toISOString())).toBe(0);
    expect(await lists.retireAtExcept(LA, [PAID], T0.toISOString())).toBe(1);
    expect(await lists.retireAtExcept(LA, [PAID], T1.toISOString())).toBe(0);
    await lists.redeclare(CLOSED, { location_id: LA, kind: "password", name: "Code" }, T1.toISOString());
    expect(await lists.findLive(OP_A, CLOSED)).toMatchObject({
      kind: "password",
      name: "Code",
      updated_at: T1.toISOString(),
    });
  });

  it("insert adds a list", async () => {
    const id = "44444444-0000-4000-8000-000000000004";
    const row = {
      id,
      operator_id: OP_A,
      location_id: LA,
      kind: "closed" as const,
      name: "New",
      retired_at: null,
      created_at: T0.toISOString(),
      updated_at: T0.toISOString(),
    };
    await lists.insert(row);
    expect(await lists.find(id)).toEqual(row);
  });
});

describe("accessListRepository: members", () => {
  it("operatorsUserId finds the operator's user only; userIdsWithPhone lists its users with the number, by id", async () => {
    expect(await lists.operatorsUserId(OP_A, U1)).toBe(U1);
    expect(await lists.operatorsUserId(OP_A, UB)).toBeUndefined();
    expect(await lists.operatorsUserId(OP_B, UB)).toBe(UB);
    const users = userRepository(store.db);
    for (const [id, operatorId] of [
      [U2, OP_A],
      [U1, OP_A],
      [UB, OP_B],
    ] as const)
      await users.setPhoneNumber({ id, operatorId, userId: id, phoneNumber: null }, PHONE);
    expect(await lists.userIdsWithPhone(OP_A, PHONE)).toEqual([U1, U2]);
    expect(await lists.userIdsWithPhone(OP_B, PHONE)).toEqual([UB]);
    expect(await lists.userIdsWithPhone(OP_A, "+3725550009")).toEqual([]);
  });

  it("adds a member once, reads it back, and lists members in join order", async () => {
    const list = { id: CLOSED, operator_id: OP_A };
    await lists.addMemberUnlessPresent(
      list,
      U2,
      closedMember(T1),
      { comment: "b", external_id: null },
      T1.toISOString(),
    );
    await lists.addMemberUnlessPresent(
      list,
      U1,
      closedMember(T0),
      { comment: "a", external_id: "x-1" },
      T0.toISOString(),
    );
    await lists.addMemberUnlessPresent(
      list,
      U1,
      closedMember(T1),
      { comment: "again", external_id: null },
      T1.toISOString(),
    );
    expect(await lists.member(CLOSED, U1)).toMatchObject({
      user_id: U1,
      operator_id: OP_A,
      joined_at: T0.toISOString(),
      comment: "a",
      external_id: "x-1",
      ends_at: null,
    });
    expect((await lists.members(CLOSED)).map((m) => m.user_id)).toEqual([U1, U2]);
    expect(await lists.members(PAID)).toEqual([]);
    expect(await lists.member(PAID, U1)).toBeUndefined();
  });

  it("setMembership writes the membership facts, and comment and external_id only when given", async () => {
    const list = { id: PAID, operator_id: OP_A };
    const m = newMembership("paid", { period: "week", recurring: false }, T0);
    await lists.addMemberUnlessPresent(list, U1, m, { comment: "a", external_id: "x" }, T0.toISOString());
    expect(await lists.member(PAID, U1)).toMatchObject({ payment_period: "week", recurring_payment: 0 });
    const removed = removeMembership(m, "paid", true, T1);
    await lists.setMembership(PAID, U1, removed, {}, T1.toISOString());
    expect(await lists.member(PAID, U1)).toMatchObject({
      comment: "a",
      external_id: "x",
      ends_at: removed.endsAt,
      end_reason: "removed",
      updated_at: T1.toISOString(),
    });
    await lists.setMembership(PAID, U1, m, { comment: "b", external_id: null }, T1.toISOString());
    expect(await lists.member(PAID, U1)).toMatchObject({
      comment: "b",
      external_id: null,
      ends_at: m.endsAt,
      end_reason: m.endReason,
    });
  });

  it("membersAmong and membershipsOf pick by users and by lists; asking for none finds none", async () => {
    const at = T0.toISOString();
    const about = { comment: "", external_id: null };
    await lists.addMemberUnlessPresent({ id: CLOSED, operator_id: OP_A }, U1, closedMember(T0), about, at);
    await lists.addMemberUnlessPresent({ id: CLOSED, operator_id: OP_A }, U2, closedMember(T0), about, at);
    await lists.addMemberUnlessPresent(
      { id: PAID, operator_id: OP_A },
      U1,
      newMembership("paid", {}, T0),
      about,
      at,
    );
    await lists.addMemberUnlessPresent({ id: B_LIST, operator_id: OP_B }, UB, closedMember(T0), about, at);
    expect((await lists.membersAmong(CLOSED, [U1, UB])).map((m) => m.user_id)).toEqual([U1]);
    expect(await lists.membersAmong(CLOSED, [])).toEqual([]);
    expect(
      (await lists.membershipsOf(U1, [CLOSED, PAID, B_LIST])).map((m) => m.access_list_id).sort(),
    ).toEqual([CLOSED, PAID].sort());
    expect(await lists.membershipsOf(U1, [])).toEqual([]);
    expect(await lists.membershipsOf(UB, [CLOSED])).toEqual([]);
  });
});

describe("accessListRepository: invites", () => {
  const invite = (over: Partial<InviteRecord> = {}): InviteRecord => ({
    access_list_id: PAID,
    phone_number: PHONE,
    operator_id: OP_A,
    payment_period: "week",
    recurring_payment: 1,
    comment: "c",
    external_id: null,
    created_at: T0.toISOString(),
    expires_at: T1.toISOString(),
    ...over,
  });

  it("adds an invite once, updates it, lists invites oldest first, and drops one", async () => {
    await lists.addInviteUnlessPresent(invite());
    await lists.addInviteUnlessPresent(invite({ comment: "again" }));
    expect(await lists.invite(PAID, PHONE)).toEqual(invite());
    await lists.updateInvite(invite({ comment: "renewed", expires_at: "2026-03-01T00:00:00.000Z" }));
    expect(await lists.invite(PAID, PHONE)).toMatchObject({
      comment: "renewed",
      expires_at: "2026-03-01T00:00:00.000Z",
    });
    await lists.addInviteUnlessPresent(invite({ phone_number: "+3725550000", created_at: T1.toISOString() }));
    await lists.addInviteUnlessPresent(invite({ phone_number: "+3725550009" }));
    expect((await lists.invites(PAID)).map((i) => i.phone_number)).toEqual([
      PHONE,
      "+3725550009",
      "+3725550000",
    ]);
    expect(await lists.invites(CLOSED)).toEqual([]);
    expect(await lists.dropInvite(PAID, PHONE)).toBe(1);
    expect(await lists.dropInvite(PAID, PHONE)).toBe(0);
    expect(await lists.invite(PAID, PHONE)).toBeUndefined();
  });

  it("pendingInvitesOf: the operator's unexpired invites of the number to lists in force, by list id, with the kind", async () => {
    await lists.addInviteUnlessPresent(invite());
    await lists.addInviteUnlessPresent(
      invite({ access_list_id: CLOSED, payment_period: null, recurring_payment: null }),
    );
    await lists.addInviteUnlessPresent(invite({ access_list_id: B_LIST, operator_id: OP_B }));
    expect(await lists.pendingInvitesOf(OP_A, PHONE, T0)).toEqual(
      [
        {
          access_list_id: PAID,
          payment_period: "week",
          recurring_payment: 1,
          comment: "c",
          external_id: null,
          kind: "paid",
        },
        {
          access_list_id: CLOSED,
          payment_period: null,
          recurring_payment: null,
          comment: "c",
          external_id: null,
          kind: "closed",
        },
      ].sort((x, y) => x.access_list_id.localeCompare(y.access_list_id)),
    );
    expect(await lists.pendingInvitesOf(OP_A, PHONE, T1)).toEqual([]);
    expect(await lists.pendingInvitesOf(OP_A, "+3725550009", T0)).toEqual([]);
    expect((await lists.pendingInvitesOf(OP_B, PHONE, T0)).map((i) => i.access_list_id)).toEqual([B_LIST]);
    await lists.retireAtExcept(LA, [CLOSED], T0.toISOString());
    expect((await lists.pendingInvitesOf(OP_A, PHONE, T0)).map((i) => i.access_list_id)).toEqual([CLOSED]);
  });
});
