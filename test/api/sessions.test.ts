import type { LightMyRequestResponse } from "fastify";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { endSessionByOperator, markPaymentByOperator } from "../../cloud/sessions/operator-commands.ts";
import { Device } from "../../shared/api/device.ts";
import { Payment, type SessionV2, SessionV2List } from "../../shared/api/session.ts";
import { CliExit, EXIT } from "../../shared/cli/exit-codes.ts";
import { PENDING_LIFETIME_MS } from "../../shared/domain/session-machine.ts";
import { type CloudHarness, startCloudHarness } from "../support/cloud-harness.ts";
import { CLIENTS, fx, OP_A } from "../support/fixture-site.ts";
import {
  type Caller,
  client,
  type RiderFlow,
  rider,
  riderFlow,
  THROTTLE_MS,
} from "../support/rider-sessions.ts";

/** L1 allows 2 sessions per rider (fixture); lockers 2 and 3 are priced "standard", locker 1 has no price list. */
const UNPRICED = fx.device("L1", "1");
const PRICED = fx.device("L1", "2");
const PRICED_2 = fx.device("L1", "3");
const SESSIONLESS_DOCK = fx.device("D1", "3");
const MIN = 60_000;
const HOUR = 60 * MIN;

let h: CloudHarness;
let f: RiderFlow;
let alice: Caller;
let bob: Caller;
let admin: Caller;

beforeEach(async () => {
  h = await startCloudHarness();
  f = riderFlow(h);
  alice = await rider(h, OP_A, "alice");
  bob = await rider(h, OP_A, "bob");
  admin = client(h, CLIENTS.admin, OP_A);
});
afterEach(() => h.close());

const iso = (ms: number) => new Date(ms).toISOString();
const nowMs = () => h.clock.now().getTime();

function expectError(res: LightMyRequestResponse, status: number, code: string) {
  expect(res.statusCode, res.body).toBe(status);
  expect(res.json()).toMatchObject({ status_code: status, error_code: code });
  expect(res.json().correlation_id).toEqual(expect.any(String));
}

async function sessionsOf(who: Caller, query = ""): Promise<SessionV2[]> {
  const res = await f.request(who, `/session/v2/sessions?limit=100${query}`);
  expect(res.statusCode, res.body).toBe(200);
  return SessionV2List.parse(res.json()).data;
}

async function onlySession(who: Caller): Promise<SessionV2> {
  const all = await sessionsOf(who);
  expect(all).toHaveLength(1);
  return all[0] as SessionV2;
}

async function getDevice(id: string): Promise<Device> {
  const res = await f.request(admin, `/device/v1/devices/${id}`);
  expect(res.statusCode, res.body).toBe(200);
  return Device.parse(res.json());
}

async function getPayment(who: Caller, id: string) {
  const res = await f.request(who, `/session/v1/payments/${id}`);
  expect(res.statusCode, res.body).toBe(200);
  return Payment.parse(res.json());
}

describe("a rider's lock and unlock make a session", () => {
  it("is pending while the lock travels, active with start_time once the device locked, ended with fee and payment on unlock", async () => {
    const t0 = nowMs();
    const lock = await f.command(alice, PRICED, { command: "lock" });
    const pending = await onlySession(alice);
    expect(pending).toMatchObject({
      user_id: alice.id,
      status: "pending",
      booked_time: null,
      start_time: null,
      end_time: null,
      fee: null,
      payment: null,
      events: [],
    });

    h.clock.advance(2_000);
    await f.report(lock, "SUCCESS", { lock_state: "LOCKED" });
    const active = await onlySession(alice);
    expect(active).toMatchObject({
      id: pending.id,
      status: "active",
      start_time: iso(t0 + 2_000),
      end_time: null,
    });
    expect(active.events).toEqual([{ name: "start", timestamp: iso(t0 + 2_000) }]);

    h.clock.advance(90 * MIN);
    const unlock = await f.command(alice, PRICED, { command: "unlock" });
    expect((await onlySession(alice)).status).toBe("active");
    await f.report(unlock, "SUCCESS", { lock_state: "UNLOCKED" });
    const ended = await onlySession(alice);
    const endAt = iso(t0 + 2_000 + 90 * MIN);
    expect(ended).toMatchObject({ status: "ended", start_time: iso(t0 + 2_000), end_time: endAt });
    expect(ended.events).toEqual([
      { name: "start", timestamp: iso(t0 + 2_000) },
      { name: "end", timestamp: endAt },
    ]);
    // Standard: 2.00 per started hour.
    expect(ended.fee).toEqual({ currency: "EUR", value: "4.00" });
    expect(ended.payment).toEqual({ id: expect.any(String), status: "PENDING" });
  });

  it("records the whole v2 record as the spec lists it, and its uri answers the same record", async () => {
    await f.lock(alice, PRICED);
    const s = await onlySession(alice);
    expect(Object.keys(s).sort()).toEqual(
      [
        "id",
        "uri",
        "user_id",
        "access_key_id",
        "status",
        "booked_time",
        "booked_until_time",
        "start_time",
        "end_time",
        "fee",
        "payment",
        "rating",
        "storage",
        "travel",
        "auxiliary_devices",
        "events",
      ].sort(),
    );
    expect(s).toMatchObject({
      uri: `/session/v2/users/${alice.id}/sessions/${s.id}`,
      access_key_id: null,
      rating: null,
      travel: null,
      auxiliary_devices: [],
      storage: {
        location: { id: fx.location("L1"), uri: `/location/v1/locations/${fx.location("L1")}` },
        device: { id: PRICED, uri: `/device/v1/devices/${PRICED}` },
      },
    });
    const detail = await f.request(alice, s.uri);
    expect(detail.statusCode, detail.body).toBe(200);
    expect(detail.json()).toEqual(s);
  });

  it("a booking makes it booked with booked_time and booked_until_time; the lock continues the same session", async () => {
    const t0 = nowMs();
    const until = iso(t0 + 30 * MIN);
    const book = await f.command(alice, PRICED, { command: "book", timeout_at: until });
    expect((await onlySession(alice)).status).toBe("pending");
    await f.report(book, "SUCCESS");
    const booked = await onlySession(alice);
    expect(booked).toMatchObject({
      status: "booked",
      booked_time: iso(t0),
      booked_until_time: until,
      start_time: null,
      events: [{ name: "book", timestamp: iso(t0) }],
    });
    expect((await getDevice(PRICED)).state.value).toBe("BOOKED");

    h.clock.advance(10 * MIN);
    await f.lock(alice, PRICED);
    const active = await onlySession(alice);
    expect(active).toMatchObject({
      id: booked.id,
      status: "active",
      booked_time: iso(t0),
      start_time: iso(t0 + 10 * MIN),
    });
    expect(active.events.map((e) => e.name)).toEqual(["book", "start"]);

    h.clock.advance(55 * MIN - THROTTLE_MS);
    await f.unlock(alice, PRICED);
    // Billed from the booking (65 min: two started hours), not from the lock (55 min).
    expect(await onlySession(alice)).toMatchObject({
      status: "ended",
      fee: { currency: "EUR", value: "4.00" },
    });
  });

  it("a failed lock leaves the session pending; the retry takes the same session up again", async () => {
    const first = await f.command(alice, PRICED, { command: "lock" });
    await f.report(first, "ERROR", { reason: "latch jammed" });
    const pending = await onlySession(alice);
    expect(pending.status).toBe("pending");

    h.clock.advance(THROTTLE_MS);
    await f.lock(alice, PRICED);
    const active = await onlySession(alice);
    expect(active).toMatchObject({ id: pending.id, status: "active" });
  });

  it("a lock the gateway refused because a card parked the locker leaves the rider holding nothing", async () => {
    const refused = await f.command(alice, PRICED, { command: "lock" });
    const reason = "in use: an RFID card parked it";
    await f.report(refused, "ERROR", { reason, lock_state: "LOCKED", held_by_another: true });
    const device = await getDevice(PRICED);
    expect(device.state.value).toBe("LOCKED");
    expect(device.user?.id ?? null).toBeNull();
    expect((await onlySession(alice)).status).toBe("pending");
    h.clock.advance(THROTTLE_MS);
    // The card's locker is not hers to open.
    expectError(await f.postCommand(alice, PRICED, { command: "unlock" }), 403, "ERRORS.FORBIDDEN");
  });

  it("a failed lock whose latch locked all the same keeps its rider as the one who may open it", async () => {
    const failed = await f.command(alice, PRICED, { command: "lock" });
    await f.report(failed, "ERROR", { reason: "the board did not confirm", lock_state: "LOCKED" });
    expect((await getDevice(PRICED)).state.value).toBe("LOCKED");
    h.clock.advance(THROTTLE_MS);
    expect((await f.postCommand(alice, PRICED, { command: "unlock" })).statusCode).toBe(200);
  });

  it("a lock that names the rider's own user_id is theirs; another user's user_id is 403 and makes no session", async () => {
    expectError(
      await f.postCommand(alice, PRICED, { command: "lock", user_id: bob.id }),
      403,
      "ERRORS.FORBIDDEN",
    );
    expect(await sessionsOf(alice)).toEqual([]);
    expect(await sessionsOf(admin)).toEqual([]);
    await f.lock(alice, PRICED);
    expect(await sessionsOf(alice)).toHaveLength(0 + 1);
    // The device's occupant is the rider who locked it without naming anyone.
    expect((await getDevice(PRICED)).user?.id).toBe(alice.id);
  });

  it("a book takes no user_id (the spec's user_id is lock's): 400, and no session", async () => {
    expectError(
      await f.postCommand(alice, PRICED, { command: "book", user_id: alice.id }),
      400,
      "ERRORS.VALIDATION_FAILED",
    );
    expect(await sessionsOf(admin)).toEqual([]);
  });

  it("an S2S client's commands make no session, even a lock on behalf of a rider (ACT_ON_BEHALF_OF)", async () => {
    await f.lock(admin, PRICED);
    const onBehalf = await f.command(admin, PRICED_2, { command: "lock", user_id: alice.id });
    await f.report(onBehalf, "SUCCESS", { lock_state: "LOCKED" });
    expect((await getDevice(PRICED_2)).user?.id).toBe(alice.id);
    expect(await sessionsOf(admin)).toEqual([]);
    expect(await sessionsOf(alice)).toEqual([]);
  });

  it("a sessionless dock makes no session", async () => {
    await f.lock(alice, SESSIONLESS_DOCK);
    expect(await sessionsOf(alice)).toEqual([]);
  });

  it("an S2S client sees every rider's sessions of its operator, and filters them by user_id", async () => {
    await f.lock(alice, PRICED);
    await f.lock(bob, PRICED_2);
    expect((await sessionsOf(admin)).map((s) => s.user_id).sort()).toEqual([alice.id, bob.id].sort());
    expect((await sessionsOf(admin, `&user_id=${bob.id}`)).map((s) => s.user_id)).toEqual([bob.id]);
    expect((await sessionsOf(alice)).map((s) => s.user_id)).toEqual([alice.id]);
  });
});

describe("other ends of a session", () => {
  it("the hardware found unlocked ends the active session (forced end), billed to then", async () => {
    const t0 = nowMs();
    await f.lock(alice, PRICED);
    h.clock.advance(30 * MIN - THROTTLE_MS);
    await f.sensed(PRICED, "UNLOCKED");
    expect(await onlySession(alice)).toMatchObject({
      status: "ended",
      end_time: iso(t0 + 30 * MIN),
      fee: { currency: "EUR", value: "2.00" },
      payment: { status: "PENDING" },
    });
  });

  it("a report that waited out a partition ends the session when the latch opened, not when it arrived", async () => {
    const t0 = nowMs();
    await f.lock(alice, PRICED);
    h.clock.advance(3 * HOUR);
    await f.sensed(PRICED, "UNLOCKED", iso(t0 + 50 * MIN));
    expect(await onlySession(alice)).toMatchObject({
      status: "ended",
      end_time: iso(t0 + 50 * MIN),
      fee: { currency: "EUR", value: "2.00" },
    });
  });

  it("a rider's unlock reported late is dated when the hardware did it", async () => {
    const t0 = nowMs();
    await f.lock(alice, PRICED);
    h.clock.advance(40 * MIN);
    const unlock = await f.command(alice, PRICED, { command: "unlock" });
    h.clock.advance(2 * HOUR);
    await f.report(unlock, "SUCCESS", {
      lock_state: "UNLOCKED",
      observedAt: iso(nowMs() - 2 * HOUR + 1_000),
    });
    expect(await onlySession(alice)).toMatchObject({
      end_time: iso(t0 + THROTTLE_MS + 40 * MIN + 1_000),
      fee: { value: "2.00" },
    });
  });

  it("an unlock the cloud had ended past its deadline, done by the hardware all the same, ends the session", async () => {
    await f.lock(alice, PRICED);
    const unlock = await f.command(alice, PRICED, { command: "unlock" });
    const openedAt = iso(nowMs() + 1_000);
    const seq = f.nextSeq();
    h.clock.advance(HOUR);
    await h.sweep();
    // An operator locks it again, and that report overtakes the unlock's: its reading is the newer one.
    const force = await f.command(admin, PRICED, { command: "force-lock" });
    await f.report(force, "SUCCESS", { lock_state: "LOCKED" });
    expect((await onlySession(alice)).status).toBe("active");
    await f.report(unlock, "SUCCESS", { lock_state: "UNLOCKED", observedAt: openedAt, seq });
    expect(await onlySession(alice)).toMatchObject({ status: "ended", end_time: openedAt });
  });

  // Found by the seeded simulation (seed 510156): a technician's unlock failed to apply on the cloud's full
  // disk, an operator's force-lock after it went through, and the unlock's reading was sent again after it.
  it("a reading that found the latch open, applied after a later lock's report, ends the session at the opening", async () => {
    await f.lock(alice, PRICED);
    h.clock.advance(10 * MIN);
    const openedAt = iso(nowMs());
    const seq = f.nextSeq();
    h.clock.advance(10 * MIN);
    const force = await f.command(admin, PRICED, { command: "force-lock" });
    await f.report(force, "SUCCESS", { lock_state: "LOCKED" });
    expect((await onlySession(alice)).status).toBe("active");
    await f.sensed(PRICED, "UNLOCKED", openedAt, seq);
    expect(await onlySession(alice)).toMatchObject({ status: "ended", end_time: openedAt });
    // The later lock's reading stands: the device is locked.
    expect((await getDevice(PRICED)).lock_state).toBe("LOCKED");
  });

  it("a latch found open while an operator's command holds the device ends the session", async () => {
    const t0 = nowMs();
    await f.lock(alice, PRICED);
    h.clock.advance(10 * MIN);
    const force = await f.command(admin, PRICED, { command: "force-lock" });
    await f.sensed(PRICED, "UNLOCKED");
    expect(await onlySession(alice)).toMatchObject({
      status: "ended",
      end_time: iso(t0 + THROTTLE_MS + 10 * MIN),
    });
    await f.report(force, "SUCCESS", { lock_state: "LOCKED" });
    expect((await getDevice(PRICED)).state.value).toBe("LOCKED");
    expect(await onlySession(alice)).toMatchObject({ status: "ended" });
  });

  it("an end dated before the session's start (two clocks) is dated at the start", async () => {
    await f.lock(alice, PRICED);
    const { start_time } = await onlySession(alice);
    await f.sensed(PRICED, "UNLOCKED", iso(Date.parse(start_time as string) - HOUR));
    expect(await onlySession(alice)).toMatchObject({ status: "ended", end_time: start_time });
  });

  it("a lock that continued a booking cancelled while it travelled starts a session of its own", async () => {
    await f.book(alice, PRICED);
    const lock = await f.command(alice, PRICED, { command: "lock" });
    const cancel = await f.command(admin, PRICED, { command: "force-cancel-booking" });
    await f.report(cancel, "SUCCESS");
    expect((await onlySession(alice)).status).toBe("ended");
    await f.report(lock, "SUCCESS", { lock_state: "LOCKED" });
    const all = await sessionsOf(alice);
    expect(all.map((x) => x.status).sort()).toEqual(["active", "ended"]);
    expect(all.find((x) => x.status === "active")).toMatchObject({
      booked_time: null,
      start_time: expect.any(String),
    });
  });

  it("an operator's force-unlock ends the active session", async () => {
    await f.lock(alice, PRICED);
    const force = await f.command(admin, PRICED, { command: "force-unlock", reason: "MAINTENANCE" });
    await f.report(force, "SUCCESS", { lock_state: "UNLOCKED" });
    expect((await onlySession(alice)).status).toBe("ended");
  });

  it("cancel-booking ends the booked session, billed from booked to end", async () => {
    await f.book(alice, PRICED);
    h.clock.advance(5 * MIN);
    const cancel = await f.command(alice, PRICED, { command: "cancel-booking" });
    await f.report(cancel, "SUCCESS");
    const s = await onlySession(alice);
    expect(s).toMatchObject({ status: "ended", start_time: null, fee: { value: "2.00" } });
    expect(s.events.map((e) => e.name)).toEqual(["book", "end"]);
    expect((await getDevice(PRICED)).state.value).toBe("UNLOCKED");
  });

  it("a booking that expires ends its session when the sweep returns the device", async () => {
    const t0 = nowMs();
    await f.book(alice, PRICED, { timeout_at: iso(t0 + 20 * MIN) });
    h.clock.advance(20 * MIN);
    await h.sweep();
    expect((await getDevice(PRICED)).state.value).toBe("UNLOCKED");
    expect(await onlySession(alice)).toMatchObject({ status: "ended", end_time: iso(t0 + 20 * MIN) });
  });

  it("a booked device found locked by the sensors ends the booking", async () => {
    await f.book(alice, PRICED);
    h.clock.advance(2 * MIN);
    await f.sensed(PRICED, "LOCKED");
    expect((await getDevice(PRICED)).state.value).toBe("LOCKED");
    expect((await onlySession(alice)).status).toBe("ended");
  });
});

describe("forced end by the operator (npm run operator -- end-session)", () => {
  const deps = () => ({ db: h.db, clock: h.clock });

  it("ends an active session with its fee; the device is left as it is", async () => {
    await f.lock(alice, PRICED);
    h.clock.advance(2 * HOUR);
    const s = await onlySession(alice);
    const r = await endSessionByOperator(deps(), s.id, { withoutFee: false });
    expect(r).toMatchObject({ sessionId: s.id, fee: "EUR 6.00", payment: "PENDING" });
    expect(await onlySession(alice)).toMatchObject({
      status: "ended",
      fee: { currency: "EUR", value: "6.00" },
      payment: { id: r.paymentId, status: "PENDING" },
    });
    expect((await getDevice(PRICED)).state.value).toBe("LOCKED");
  });

  it("--without-fee makes the payment NOT_CHARGED", async () => {
    await f.lock(alice, PRICED);
    h.clock.advance(2 * HOUR);
    const s = await onlySession(alice);
    const r = await endSessionByOperator(deps(), s.id, { withoutFee: true });
    expect(r).toMatchObject({ fee: "EUR 0.00", payment: "NOT_CHARGED" });
    expect(await onlySession(alice)).toMatchObject({
      fee: { value: "0.00" },
      payment: { status: "NOT_CHARGED" },
    });
  });

  it("ends a booked session too", async () => {
    await f.book(alice, PRICED);
    h.clock.advance(2 * MIN);
    await endSessionByOperator(deps(), (await onlySession(alice)).id, { withoutFee: false });
    expect((await onlySession(alice)).status).toBe("ended");
  });

  it("refuses a pending or ended session (check failed), an unknown one (not found) and a malformed id (usage)", async () => {
    const lock = await f.command(alice, PRICED, { command: "lock" });
    const pending = await onlySession(alice);
    const code = (p: Promise<unknown>) =>
      p.then(
        () => null,
        (e: unknown) => (e instanceof CliExit ? e.code : e),
      );
    expect(await code(endSessionByOperator(deps(), pending.id, { withoutFee: false }))).toBe(
      EXIT.checkFailed,
    );
    await f.report(lock, "SUCCESS", { lock_state: "LOCKED" });
    await endSessionByOperator(deps(), pending.id, { withoutFee: false });
    expect(await code(endSessionByOperator(deps(), pending.id, { withoutFee: false }))).toBe(
      EXIT.checkFailed,
    );
    expect(
      await code(endSessionByOperator(deps(), "00000000-0000-4000-8000-000000000000", { withoutFee: false })),
    ).toBe(EXIT.notFound);
    expect(await code(endSessionByOperator(deps(), "nope", { withoutFee: false }))).toBe(EXIT.usage);
  });
});

describe("billing rules", () => {
  async function endedAfter(device: string, ms: number): Promise<SessionV2> {
    await f.lock(alice, device);
    h.clock.advance(ms - THROTTLE_MS);
    await f.unlock(alice, device);
    return onlySession(alice);
  }

  it("a session under one minute is NOT_CHARGED", async () => {
    expect(await endedAfter(PRICED, MIN - 1_000)).toMatchObject({
      fee: { currency: "EUR", value: "0.00" },
      payment: { status: "NOT_CHARGED" },
    });
  });

  it("a session of one minute is charged", async () => {
    expect(await endedAfter(PRICED, MIN)).toMatchObject({
      fee: { currency: "EUR", value: "2.00" },
      payment: { status: "PENDING" },
    });
  });

  it("a booking cancelled within a minute is NOT_CHARGED (measured from booked to end)", async () => {
    await f.book(alice, PRICED);
    h.clock.advance(MIN - 1_000);
    const cancel = await f.command(alice, PRICED, { command: "cancel-booking" });
    await f.report(cancel, "SUCCESS");
    expect(await onlySession(alice)).toMatchObject({
      fee: { value: "0.00" },
      payment: { status: "NOT_CHARGED" },
    });
  });

  it("a device without a price list: no fee, NOT_CHARGED", async () => {
    expect(await endedAfter(UNPRICED, 3 * HOUR)).toMatchObject({
      fee: null,
      payment: { status: "NOT_CHARGED" },
    });
  });

  it("the fee stops at the price list's cap", async () => {
    expect((await endedAfter(PRICED, 10 * HOUR)).fee).toEqual({ currency: "EUR", value: "10.00" });
  });
});

describe("payments of the built-in provider (npm run operator -- mark-payment)", () => {
  const deps = () => ({ db: h.db, clock: h.clock });
  const code = (p: Promise<unknown>) =>
    p.then(
      () => null,
      (e: unknown) => (e instanceof CliExit ? e.code : e),
    );

  async function endedPayment(device: string): Promise<string> {
    await f.lock(alice, device);
    h.clock.advance(HOUR);
    await f.unlock(alice, device);
    const s = (await sessionsOf(alice)).find((x) => x.storage.device.id === device);
    return s?.payment?.id as string;
  }

  it("stays PENDING until the operator marks it; each mark the machine allows shows on the session and the payment", async () => {
    const id = await endedPayment(PRICED);
    expect(await getPayment(alice, id)).toMatchObject({ id, status: "PENDING", fee: { value: "4.00" } });
    expect(await markPaymentByOperator(deps(), id, "PAID")).toEqual({
      paymentId: id,
      from: "PENDING",
      to: "PAID",
    });
    expect((await onlySession(alice)).payment).toEqual({ id, status: "PAID" });
    await markPaymentByOperator(deps(), id, "refunded");
    expect((await getPayment(alice, id)).status).toBe("REFUNDED");
    expect(await code(markPaymentByOperator(deps(), id, "PAID"))).toBe(EXIT.checkFailed);
  });

  it("refuses what the machine does not allow, an unknown status, payment or malformed id", async () => {
    const id = await endedPayment(PRICED);
    expect(await code(markPaymentByOperator(deps(), id, "REFUNDED"))).toBe(EXIT.checkFailed);
    expect(await code(markPaymentByOperator(deps(), id, "SETTLED"))).toBe(EXIT.usage);
    expect(await code(markPaymentByOperator(deps(), "00000000-0000-4000-8000-000000000000", "PAID"))).toBe(
      EXIT.notFound,
    );
    expect(await code(markPaymentByOperator(deps(), "x", "PAID"))).toBe(EXIT.usage);
    expect((await getPayment(alice, id)).status).toBe("PENDING");
  });

  it("a NOT_CHARGED payment is final", async () => {
    const id = await endedPayment(UNPRICED);
    expect((await getPayment(alice, id)).status).toBe("NOT_CHARGED");
    expect(await code(markPaymentByOperator(deps(), id, "PAID"))).toBe(EXIT.checkFailed);
  });

  it("reaches NEEDS_APPROVAL → APPROVED → PAID, and PAYMENT_FAILED → PENDING, CANCELED, REFUND_FAILED", async () => {
    const a = await endedPayment(PRICED);
    for (const s of ["NEEDS_APPROVAL", "APPROVED", "PAYMENT_FAILED", "PENDING", "PAID", "REFUND_FAILED"])
      await markPaymentByOperator(deps(), a, s);
    expect((await getPayment(alice, a)).status).toBe("REFUND_FAILED");
    const b = await endedPayment(PRICED_2);
    await markPaymentByOperator(deps(), b, "CANCELED");
    expect((await getPayment(alice, b)).status).toBe("CANCELED");
  });
});

describe("max_user_sessions of the location", () => {
  it("refuses a rider's third lock at L1 (max 2) with 400 MAX_USER_SESSIONS_REACHED; nothing is sent or held", async () => {
    await f.lock(alice, PRICED);
    await f.lock(alice, PRICED_2);
    const sent = h.gateways.commands.length;
    const res = await f.postCommand(alice, UNPRICED, { command: "lock" });
    expectError(res, 400, "ERRORS.MAX_USER_SESSIONS_REACHED");
    expect(res.json().error_message).toMatch(/max_user_sessions 2/);
    expect(h.gateways.commands).toHaveLength(sent);
    expect((await getDevice(UNPRICED)).state.value).toBe("UNLOCKED");
    expect(await sessionsOf(alice)).toHaveLength(2);
    expectError(
      await f.postCommand(alice, UNPRICED, { command: "book" }),
      400,
      "ERRORS.MAX_USER_SESSIONS_REACHED",
    );

    // Another rider is not concerned; an ended session frees a place.
    await f.lock(bob, UNPRICED);
    await f.unlock(bob, UNPRICED);
    await f.unlock(alice, PRICED);
    await f.lock(alice, UNPRICED);
    expect((await sessionsOf(alice)).filter((s) => s.status === "active")).toHaveLength(2);
  });

  it("counts bookings and locks under way, not failed ones; a lock continuing a booking is not a new session", async () => {
    await f.book(alice, PRICED);
    const inFlight = await f.command(alice, PRICED_2, { command: "lock" });
    expectError(
      await f.postCommand(alice, UNPRICED, { command: "lock" }),
      400,
      "ERRORS.MAX_USER_SESSIONS_REACHED",
    );
    await f.report(inFlight, "ERROR", { reason: "jammed" });
    h.clock.advance(THROTTLE_MS);
    const accepted = await f.command(alice, UNPRICED, { command: "lock" });
    await f.report(accepted, "SUCCESS", { lock_state: "LOCKED" });
    // At the maximum (a booking and an active session), the booked locker's lock still goes through.
    await f.lock(alice, PRICED);
    expect((await sessionsOf(alice, "&status=active")).length).toBe(2);
  });
});

describe("pending sessions expire after 30 days", () => {
  it("is listed and readable until then, gone at 30 days; a later lock makes a new session", async () => {
    const lock = await f.command(alice, PRICED, { command: "lock" });
    await f.report(lock, "ERROR", { reason: "jammed" });
    const pending = await onlySession(alice);
    h.clock.advance(PENDING_LIFETIME_MS - 1);
    expect((await onlySession(alice)).id).toBe(pending.id);
    expect((await f.request(alice, pending.uri)).statusCode).toBe(200);
    h.clock.advance(1);
    expect(await sessionsOf(alice)).toEqual([]);
    expect(await sessionsOf(admin)).toEqual([]);
    expectError(await f.request(alice, pending.uri), 404, "ERRORS.NOT_FOUND");
    await f.lock(alice, PRICED);
    const fresh = await onlySession(alice);
    expect(fresh.id).not.toBe(pending.id);
    expect(fresh.status).toBe("active");
  });
});
