import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ConsoleAuditPage } from "../../shared/api/console-audit.ts";
import { ConsoleSession, ConsoleSessionList } from "../../shared/api/console-sessions.ts";
import { SessionV2List } from "../../shared/api/session.ts";
import { type CloudHarness, startCloudHarness } from "../support/cloud-harness.ts";
import {
  type ConsoleStaff,
  consoleRequests,
  expectError,
  type StaffCast,
  signedInCast,
} from "../support/console-api.ts";
import { fx, OP_A, OP_B } from "../support/fixture-site.ts";
import { type Caller, type RiderFlow, rider, riderFlow } from "../support/rider-sessions.ts";

const PRICED = fx.device("L1", "2");
const PRICED_2 = fx.device("L1", "3");
const HOUR = 3_600_000;

let h: CloudHarness;
let f: RiderFlow;
let alice: Caller;
let bob: Caller;
let staff: StaffCast;

beforeEach(async () => {
  // Sessions run for an hour here: the console sessions outlast them.
  h = await startCloudHarness({ console: { idleTimeoutMs: 24 * HOUR } });
  f = riderFlow(h);
  alice = await rider(h, OP_A, "alice");
  bob = await rider(h, OP_A, "bob");
  staff = await signedInCast(h, "operator");
});
afterEach(() => h.close());

const { get, post } = consoleRequests(() => h);

async function consoleSession(who: ConsoleStaff, id: string): Promise<ConsoleSession> {
  const res = await get(who, `/console/api/sessions/${id}`);
  expect(res.statusCode, res.body).toBe(200);
  return ConsoleSession.parse(res.json());
}

async function list(who: ConsoleStaff, query = ""): Promise<ConsoleSessionList> {
  const res = await get(who, `/console/api/sessions${query}`);
  expect(res.statusCode, res.body).toBe(200);
  return ConsoleSessionList.parse(res.json());
}

async function audit(who: ConsoleStaff, query = ""): Promise<ConsoleAuditPage> {
  const res = await get(who, `/console/api/audit${query}`);
  expect(res.statusCode, res.body).toBe(200);
  return ConsoleAuditPage.parse(res.json());
}

/** Alice's session on PRICED, active an hour; Bob's on PRICED_2, active. */
async function twoActive(): Promise<{ aliceSession: string; bobSession: string }> {
  await f.lock(alice, PRICED);
  await f.lock(bob, PRICED_2);
  h.clock.advance(HOUR);
  const aliceSession = (await list(staff.viewer, `?device_id=${PRICED}`)).data[0]?.id ?? "";
  const bobSession = (await list(staff.viewer, `?device_id=${PRICED_2}`)).data[0]?.id ?? "";
  return { aliceSession, bobSession };
}

describe("the console's sessions", () => {
  it("lists the operator's sessions to every role, by status, device and rider, a page at a time", async () => {
    const { aliceSession, bobSession } = await twoActive();
    const all = await list(staff.viewer);
    expect(all.data.map((s) => s.id).sort()).toEqual([aliceSession, bobSession].sort());
    expect(all.data.find((s) => s.id === aliceSession)).toMatchObject({
      status: "active",
      user_id: alice.id,
      device_id: PRICED,
      location_id: fx.location("L1"),
      fee: null,
      payment: null,
    });
    expect((await list(staff.viewer, `?user_id=${bob.id}`)).data.map((s) => s.id)).toEqual([bobSession]);
    expect((await list(staff.viewer, "?status=ended")).data).toEqual([]);

    const first = await list(staff.viewer, "?limit=1");
    expect(first.data).toHaveLength(1);
    expect(first.pagination_token).toEqual(expect.any(String));
    const second = await list(staff.viewer, `?limit=1&pagination_token=${first.pagination_token}`);
    expect([...first.data, ...second.data].map((s) => s.id).sort()).toEqual(
      [aliceSession, bobSession].sort(),
    );
    expect(second.pagination_token).toBeNull();

    // Another operator's staff sees none of them.
    expect((await list(staff.otherOperator)).data).toEqual([]);
    expectError(
      await get(staff.otherOperator, `/console/api/sessions/${aliceSession}`),
      404,
      "ERRORS.NOT_FOUND",
    );
    expectError(
      await h.app.inject({ method: "GET", url: "/console/api/sessions" }),
      401,
      "ERRORS.UNAUTHORIZED",
    );
  });

  it("ends a rider's session without a fee as the operator's staff: the public API shows it ended, NOT_CHARGED, and the audit names who", async () => {
    const { aliceSession } = await twoActive();
    const res = await post(staff.operator, `/console/api/sessions/${aliceSession}/end`, {
      without_fee: true,
      reason: "Rider called: the latch was stuck",
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ session_id: aliceSession, payment: { status: "NOT_CHARGED" } });

    const seen = await f.request(alice, "/session/v2/sessions?limit=10");
    const [ended] = SessionV2List.parse(seen.json()).data;
    expect(ended).toMatchObject({ id: aliceSession, status: "ended", payment: { status: "NOT_CHARGED" } });
    expect(await consoleSession(staff.viewer, aliceSession)).toMatchObject({
      status: "ended",
      payment: { status: "NOT_CHARGED" },
    });

    const { data } = await audit(staff.viewer);
    expect(data).toEqual([
      expect.objectContaining({
        actor: { kind: "staff", id: staff.operator.id, name: "operator@a.example" },
        action: "session.end-without-fee",
        subject: { type: "session", id: aliceSession },
        comment: "Rider called: the latch was stuck",
        changes: expect.objectContaining({ status: { from: "active", to: "ended" } }),
      }),
    ]);
    // Ending it again is refused and records nothing more.
    expectError(
      await post(staff.operator, `/console/api/sessions/${aliceSession}/end`, { without_fee: false }),
      400,
      "ERRORS.BAD_REQUEST",
    );
    expect((await audit(staff.viewer)).data).toHaveLength(1);
  });

  it("refuses a viewer's end and payment mark, and another operator's staff, changing nothing", async () => {
    const { aliceSession, bobSession } = await twoActive();
    expectError(
      await post(staff.viewer, `/console/api/sessions/${aliceSession}/end`, { without_fee: true }),
      403,
      "ERRORS.FORBIDDEN",
    );
    expectError(
      await post(staff.otherOperator, `/console/api/sessions/${aliceSession}/end`, { without_fee: true }),
      404,
      "ERRORS.NOT_FOUND",
    );
    expect((await consoleSession(staff.viewer, aliceSession)).status).toBe("active");

    await post(staff.operator, `/console/api/sessions/${bobSession}/end`, { without_fee: false });
    const payment = (await consoleSession(staff.viewer, bobSession)).payment;
    expect(payment?.status).toBe("PENDING");
    const mark = `/console/api/payments/${payment?.id}/status`;
    expectError(await post(staff.viewer, mark, { status: "PAID" }), 403, "ERRORS.FORBIDDEN");
    expectError(await post(staff.otherOperator, mark, { status: "PAID" }), 404, "ERRORS.NOT_FOUND");
    expect((await consoleSession(staff.viewer, bobSession)).payment?.status).toBe("PENDING");
    expect((await audit(staff.viewer)).data.map((e) => e.action)).toEqual(["session.end"]);
  });

  it("moves a payment only where the payment machine allows", async () => {
    const { bobSession } = await twoActive();
    await post(staff.operator, `/console/api/sessions/${bobSession}/end`, { without_fee: false });
    const ended = await consoleSession(staff.viewer, bobSession);
    expect(ended.fee).not.toBeNull();
    const mark = `/console/api/payments/${ended.payment?.id}/status`;

    const paid = await post(staff.operator, mark, { status: "PAID" });
    expect(paid.statusCode, paid.body).toBe(200);
    expect(paid.json()).toEqual({ from: "PENDING", to: "PAID" });
    const refused = await post(staff.operator, mark, { status: "PENDING" });
    expectError(refused, 400, "ERRORS.BAD_REQUEST");
    expect(refused.json().error_message).toContain("REFUNDED, REFUND_FAILED");
    expect((await consoleSession(staff.viewer, bobSession)).payment?.status).toBe("PAID");

    const marks = await audit(staff.viewer, "?action=payment.mark");
    expect(marks.data).toEqual([
      expect.objectContaining({
        actor: { kind: "staff", id: staff.operator.id, name: "operator@a.example" },
        subject: { type: "payment", id: ended.payment?.id },
      }),
    ]);
  });
});

describe("a superadmin in the console", () => {
  it("names the operator it reads or acts for, and is refused without one", async () => {
    const root = staff.superadmin;
    const { aliceSession } = await twoActive();
    expectError(await get(root, "/console/api/sessions"), 400, "ERRORS.BAD_REQUEST");
    expect((await list(root, `?operator_id=${OP_A}`)).data).toHaveLength(2);
    expect((await list(root, `?operator_id=${OP_B}`)).data).toEqual([]);
    const end = `/console/api/sessions/${aliceSession}/end`;
    expectError(
      await post(root, `${end}?operator_id=${OP_B}`, { without_fee: true }),
      404,
      "ERRORS.NOT_FOUND",
    );
    const ended = await post(root, `${end}?operator_id=${OP_A}`, { without_fee: true });
    expect(ended.statusCode, ended.body).toBe(200);
    expect((await audit(root, `?operator_id=${OP_A}`)).data.map((e) => e.actor)).toEqual([
      { kind: "staff", id: root.id, name: "root@example.com" },
    ]);
  });
});

describe("the console's audit log", () => {
  it("lists newest first with filters and cursor paging, to every role of the operator only", async () => {
    const { aliceSession, bobSession } = await twoActive();
    await post(staff.operator, `/console/api/sessions/${aliceSession}/end`, { without_fee: true });
    h.clock.advance(1_000);
    const between = h.clock.now().toISOString();
    h.clock.advance(1_000);
    await post(staff.operator, `/console/api/sessions/${bobSession}/end`, { without_fee: false });

    const all = await audit(staff.viewer);
    expect(all.data.map((e) => e.subject.id)).toEqual([bobSession, aliceSession]);
    expect(all.next_cursor).toBeNull();

    const first = await audit(staff.viewer, "?limit=1");
    expect(first.data.map((e) => e.subject.id)).toEqual([bobSession]);
    const older = await audit(staff.viewer, `?limit=1&cursor=${first.next_cursor}`);
    expect(older.data.map((e) => e.subject.id)).toEqual([aliceSession]);
    expect(older.next_cursor).toBeNull();

    expect((await audit(staff.viewer, `?before=${between}`)).data.map((e) => e.subject.id)).toEqual([
      aliceSession,
    ]);
    expect((await audit(staff.viewer, `?from=${between}`)).data.map((e) => e.subject.id)).toEqual([
      bobSession,
    ]);
    expect(
      (await audit(staff.viewer, `?subject_type=session&subject_id=${aliceSession}`)).data.map(
        (e) => e.action,
      ),
    ).toEqual(["session.end-without-fee"]);
    expect((await audit(staff.viewer, `?actor_kind=staff&actor_id=${staff.viewer.id}`)).data).toEqual([]);
    expect((await audit(staff.viewer, "?action=session.end")).data).toHaveLength(1);

    expect((await audit(staff.otherOperator)).data).toEqual([]);
    expectError(
      await get(staff.viewer, `/console/api/audit?limit=1&action=session.end&cursor=${first.next_cursor}`),
      400,
      "ERRORS.INVALID_PAGINATION_TOKEN",
    );
    expectError(await h.app.inject({ method: "GET", url: "/console/api/audit" }), 401, "ERRORS.UNAUTHORIZED");
  });
});
