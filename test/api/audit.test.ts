import type { LightMyRequestResponse } from "fastify";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { listAudit } from "../../cloud/audit/audit-log.ts";
import type { AuditEntry } from "../../cloud/audit/audit-repository.ts";
import { endSessionByOperator } from "../../cloud/sessions/operator-commands.ts";
import { createSessionService } from "../../cloud/sessions/session-service.ts";
import type { SessionV2 } from "../../shared/api/session.ts";
import { SessionV2List } from "../../shared/api/session.ts";
import { type CloudHarness, startCloudHarness } from "../support/cloud-harness.ts";
import { CLIENTS, fx, OP_A, OP_B } from "../support/fixture-site.ts";
import { type Caller, client, type RiderFlow, rider, riderFlow } from "../support/rider-sessions.ts";

/**
 * The audit log through the API: what a caller's accepted force command, location PATCH, session end and
 * payment mark record (who, when, what, why, which fields), and that a refused request records nothing.
 */

const LOCKER = fx.device("L1", "1");
const PRICED = fx.device("L1", "2");
const L1 = fx.location("L1");
const HOUR = 3_600_000;

let h: CloudHarness;
let f: RiderFlow;
let alice: Caller;

beforeEach(async () => {
  h = await startCloudHarness();
  f = riderFlow(h);
  alice = await rider(h, OP_A, "alice");
});
afterEach(() => h.close());

const entries = async (operatorId = OP_A): Promise<AuditEntry[]> =>
  (await listAudit(h.db, operatorId, { limit: 200 })).data;

const command = (as: string, deviceId: string, payload: Record<string, unknown>) =>
  h.call(as, { method: "POST", url: `/device/v1/devices/${deviceId}/commands`, payload });

function expectStatus(res: LightMyRequestResponse, status: number) {
  expect(res.statusCode, res.body).toBe(status);
}

describe("force commands", () => {
  it("record who, when, what, the reason and comment, the device's changes and the correlation id", async () => {
    const res = await command(CLIENTS.admin, LOCKER, {
      command: "force-unlock",
      reason: "OTHER",
      comment: "rider stuck at the gate",
    });
    expectStatus(res, 200);
    const id = (res.json() as { id: string }).id;
    expect(await entries()).toEqual([
      {
        id: expect.any(String),
        operator_id: OP_A,
        at: h.clock.now().toISOString(),
        actor: { kind: "api_client", id: CLIENTS.admin },
        action: "command.force-unlock",
        subject: { type: "device", id: LOCKER },
        reason: "OTHER",
        comment: "rider stuck at the gate",
        changes: expect.objectContaining({ command_id: { from: null, to: id } }),
        correlation_id: res.headers["x-correlation-id"],
      },
    ]);
  });

  it("record force-lock, force-cancel-booking and sync-device, which carry no reason", async () => {
    expectStatus(await command(CLIENTS.admin, LOCKER, { command: "force-lock" }), 200);
    h.clock.advance(20_000);
    expectStatus(await command(CLIENTS.admin, PRICED, { command: "sync-device", power_cycle: true }), 200);
    await f.book(alice, fx.device("L1", "3"));
    h.clock.advance(1_000);
    expectStatus(
      await command(CLIENTS.admin, fx.device("L1", "3"), { command: "force-cancel-booking" }),
      200,
    );
    const listed = await entries();
    expect(listed.map((e) => [e.action, e.subject.id, e.reason, e.comment])).toEqual([
      ["command.force-cancel-booking", fx.device("L1", "3"), null, null],
      ["command.sync-device", PRICED, null, null],
      ["command.force-lock", LOCKER, null, null],
    ]);
  });

  it("a replay of its Idempotency-Key records nothing more", async () => {
    const headers = { "idempotency-key": "force-once" };
    const payload = { command: "force-unlock", reason: "MAINTENANCE" };
    const url = `/device/v1/devices/${LOCKER}/commands`;
    const first = await h.call(CLIENTS.admin, { method: "POST", url, headers, payload });
    expectStatus(first, 200);
    h.clock.advance(1_000);
    const replay = await h.call(CLIENTS.admin, { method: "POST", url, headers, payload });
    expect(replay.json()).toEqual(first.json());
    expect((await entries()).map((e) => [e.action, e.correlation_id])).toEqual([
      ["command.force-unlock", first.headers["x-correlation-id"]],
    ]);
  });

  it("a rider's and a client's ordinary commands record nothing", async () => {
    await f.lock(alice, PRICED);
    expectStatus(await command(CLIENTS.admin, LOCKER, { command: "lock" }), 200);
    expect(await entries()).toEqual([]);
  });

  it("a refused one records nothing: 403, 400 and the 429 throttle", async () => {
    expectStatus(await command(CLIENTS.basic, LOCKER, { command: "force-unlock", reason: "TESTING" }), 403);
    expectStatus(await f.postCommand(alice, LOCKER, { command: "force-lock" }), 403);
    expectStatus(await command(CLIENTS.admin, LOCKER, { command: "force-unlock" }), 400);
    expectStatus(await command(CLIENTS.admin, LOCKER, { command: "force-unlock", reason: "OTHER" }), 400);
    expectStatus(await command(CLIENTS.other, LOCKER, { command: "force-lock" }), 404);
    expectStatus(await command(CLIENTS.admin, LOCKER, { command: "force-lock" }), 200);
    const recorded = await entries();
    expect(recorded).toHaveLength(1);
    expectStatus(await command(CLIENTS.admin, LOCKER, { command: "force-unlock", reason: "TESTING" }), 429);
    expect(await entries()).toEqual(recorded);
  });
});

describe("location PATCH", () => {
  const patch = (as: string, payload: Record<string, unknown>) =>
    h.call(as, { method: "PATCH", url: `/location/v1/locations/${L1}`, payload });

  it("records exactly the fields that changed, from and to", async () => {
    const res = await patch(CLIENTS.admin, {
      label: "Renamed",
      address: "Street 1",
      latitude: 52.5,
      public_tags: { add: ["new"], remove: ["covered"] },
      comment: "moved",
    });
    expectStatus(res, 204);
    const [entry, ...rest] = await entries();
    expect(rest).toEqual([]);
    expect(entry).toMatchObject({
      actor: { kind: "api_client", id: CLIENTS.admin },
      action: "location.patch",
      subject: { type: "location", id: L1 },
      reason: null,
      correlation_id: res.headers["x-correlation-id"],
    });
    expect(entry?.changes).toEqual({
      label: { from: "Lockers one", to: "Renamed" },
      latitude: { from: 52.37, to: 52.5 },
      public_tags: { from: ["covered", "station"], to: ["station", "new"] },
      comment: { from: "internal note", to: "moved" },
    });
  });

  it("records no field when nothing changed", async () => {
    expectStatus(await patch(CLIENTS.basic, { label: "Lockers one", code: "L1" }), 204);
    expect((await entries()).map((e) => [e.action, e.changes])).toEqual([["location.patch", {}]]);
  });

  it("a refused one records nothing: 403, 400, and another operator's location", async () => {
    expectStatus(await patch(CLIENTS.basic, { label: "X", support_phone: "112" }), 403);
    expectStatus(await patch(CLIENTS.admin, { latitude: "north" }), 400);
    expectStatus(await patch(CLIENTS.other, { label: "Theirs" }), 404);
    expect(await entries()).toEqual([]);
  });
});

describe("session ends and payment marks", () => {
  const service = () => createSessionService({ db: h.db, clock: h.clock });
  const admin = () => client(h, CLIENTS.admin, OP_A);

  async function activeSession(): Promise<SessionV2> {
    await f.lock(alice, PRICED);
    h.clock.advance(2 * HOUR);
    const res = await f.request(alice, "/session/v2/sessions");
    const [s] = SessionV2List.parse(res.json()).data;
    if (!s) throw new Error("no session");
    return s;
  }

  const principal = (operatorId = OP_A, id: string = CLIENTS.admin) => ({
    kind: "client" as const,
    id,
    operatorId,
    permissions: new Set(["DEVICE_ADMIN" as const]),
  });

  it("an end with its fee records the status, fee and payment it left", async () => {
    const s = await activeSession();
    const origin = { actor: { kind: "staff", id: "staff-7" }, correlationId: "req-1" };
    const ended = await service().end(principal(), s.id, { withoutFee: false }, origin);
    expect(await entries()).toEqual([
      {
        id: expect.any(String),
        operator_id: OP_A,
        at: h.clock.now().toISOString(),
        actor: { kind: "staff", id: "staff-7" },
        action: "session.end",
        subject: { type: "session", id: s.id },
        reason: null,
        comment: null,
        changes: {
          status: { from: "active", to: "ended" },
          fee: { from: null, to: "EUR 6.00" },
          payment_status: { from: null, to: "PENDING" },
        },
        correlation_id: "req-1",
      },
    ]);
    const shown = await f.request(admin(), `/session/v2/users/${s.user_id}/sessions/${s.id}`);
    expect(shown.json()).toMatchObject({ status: "ended", payment: { id: ended.paymentId } });
  });

  it("an end without fee records it as such, NOT_CHARGED", async () => {
    const s = await activeSession();
    await service().end(principal(), s.id, { withoutFee: true, comment: "goodwill" });
    const [entry] = await entries();
    expect(entry).toMatchObject({
      actor: { kind: "api_client", id: CLIENTS.admin },
      action: "session.end-without-fee",
      comment: "goodwill",
      changes: { payment_status: { from: null, to: "NOT_CHARGED" }, fee: { from: null, to: "EUR 0.00" } },
    });
  });

  it("the site's CLI (npm run operator -- end-session) records as the system", async () => {
    const s = await activeSession();
    await endSessionByOperator({ db: h.db, clock: h.clock }, s.id, { withoutFee: true });
    const [entry] = await entries();
    expect(entry).toMatchObject({
      actor: { kind: "system", id: "operator-cli" },
      action: "session.end-without-fee",
      correlation_id: null,
    });
  });

  it("a payment mark records its status change", async () => {
    const s = await activeSession();
    const ended = await service().end(principal(), s.id, { withoutFee: false });
    h.clock.advance(1_000);
    await service().markPayment(principal(), ended.paymentId, "PAID");
    const [mark] = await entries();
    expect(mark).toMatchObject({
      action: "payment.mark",
      subject: { type: "payment", id: ended.paymentId },
      changes: { status: { from: "PENDING", to: "PAID" } },
    });
  });

  it("a refused end or mark records nothing: another operator's, a rider's, no permission, not allowed", async () => {
    const s = await activeSession();
    const refused = (p: Promise<unknown>) => expect(p).rejects.toMatchObject({ code: expect.any(String) });
    await refused(service().end(principal(OP_B, CLIENTS.other), s.id, { withoutFee: false }));
    await refused(
      service().end({ ...principal(), kind: "user" as const, id: alice.id }, s.id, { withoutFee: false }),
    );
    await refused(service().end({ ...principal(), permissions: new Set() }, s.id, { withoutFee: false }));
    expect(await entries()).toEqual([]);
    const ended = await service().end(principal(), s.id, { withoutFee: true });
    await refused(service().end(principal(), s.id, { withoutFee: false }));
    await refused(service().markPayment(principal(), ended.paymentId, "PAID"));
    await refused(service().markPayment(principal(OP_B, CLIENTS.other), ended.paymentId, "REFUNDED"));
    expect((await entries()).map((e) => e.action)).toEqual(["session.end-without-fee"]);
  });
});

describe("listing", () => {
  it("never lists another operator's entries, and pages newest first with a cursor", async () => {
    expectStatus(await command(CLIENTS.other, fx.device("B1", "1"), { command: "force-lock" }), 200);
    for (const alias of ["1", "2", "3"]) {
      expectStatus(await command(CLIENTS.admin, fx.device("L1", alias), { command: "force-lock" }), 200);
      h.clock.advance(1_000);
    }
    const theirs = await entries(OP_B);
    expect(theirs.map((e) => [e.actor.id, e.subject.id])).toEqual([[CLIENTS.other, fx.device("B1", "1")]]);
    const first = await listAudit(h.db, OP_A, { limit: 2 });
    expect(first.data.map((e) => e.subject.id)).toEqual([fx.device("L1", "3"), fx.device("L1", "2")]);
    const next = await listAudit(h.db, OP_A, { limit: 2, cursor: first.next_cursor ?? "" });
    expect(next).toEqual({
      data: [expect.objectContaining({ subject: { type: "device", id: LOCKER } })],
      next_cursor: null,
    });
    const filtered = {
      actor: { kind: "api_client", id: CLIENTS.admin },
      subject: { type: "device", id: LOCKER },
    };
    expect((await listAudit(h.db, OP_A, filtered)).data).toHaveLength(1);
    await expect(
      listAudit(h.db, OP_A, { ...filtered, cursor: first.next_cursor ?? "" }),
    ).rejects.toMatchObject({
      code: "ERRORS.INVALID_PAGINATION_TOKEN",
    });
  });
});
