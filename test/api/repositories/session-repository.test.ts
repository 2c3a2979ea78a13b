import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { paymentRepository } from "../../../cloud/sessions/payment-repository.ts";
import { type SessionScope, sessionRepository } from "../../../cloud/sessions/session-repository.ts";
import { fx, OP_A, OP_B } from "../../support/fixture-site.ts";
import type { TestDb } from "../../support/test-db.ts";
import { openFixtureStore } from "./fixture-store.ts";
import { sessionRow } from "./session-rows.ts";

const LOCKER = fx.device("L1", "2");
const OTHER = fx.device("L1", "3");
const at = (m: number) => new Date(Date.UTC(2026, 0, 15, 10, m)).toISOString();
const operator: SessionScope = { operatorId: OP_A, pendingAfter: at(1) };
const rider: SessionScope = { ...operator, userId: "rider-1" };

describe("session repository", () => {
  let store: TestDb;
  beforeAll(async () => {
    store = await openFixtureStore();
    const sessions = sessionRepository(store.db);
    await sessions.insert(sessionRow("s-ended", { created_at: at(2), status: "ended", status_at: at(20) }));
    await sessions.insert(sessionRow("s-active", { created_at: at(3), status_at: at(3) }));
    await sessions.insert(
      sessionRow("s-rider2", { created_at: at(4), user_id: "rider-2", device_id: OTHER }),
    );
    await sessions.insert(
      sessionRow("s-expired", { created_at: at(0), status: "pending", start_time: null }),
    );
    await sessions.insert(
      sessionRow("s-pending", { created_at: at(5), status: "pending", start_time: null }),
    );
    await paymentRepository(store.db).open(
      {
        id: "p-ended",
        operator_id: OP_A,
        session_id: "s-ended",
        provider: "manual",
        status: "PAID",
        created_at: at(20),
        updated_at: at(20),
      },
      "session-end",
    );
  });
  afterAll(() => store.drop());
  const repo = () => sessionRepository(store.db);
  const ids = (rows: { id: string }[]) => rows.map((r) => r.id);

  it("lists the scope's sessions newest first, without expired pending ones, with their payments", async () => {
    const all = await repo().listed(operator, {}, { limit: 10 });
    expect(ids(all)).toEqual(["s-pending", "s-rider2", "s-active", "s-ended"]);
    expect(all.find((r) => r.id === "s-ended")).toMatchObject({
      payment_id: "p-ended",
      payment_status: "PAID",
    });
    expect(all.find((r) => r.id === "s-active")).toMatchObject({ payment_id: null, payment_status: null });
    expect(ids(await repo().listed(rider, {}, { limit: 10 }))).toEqual(["s-pending", "s-active", "s-ended"]);
    expect(await repo().listed({ ...operator, operatorId: OP_B }, {}, { limit: 10 })).toEqual([]);
  });

  it("filters by status, user, location and status time, and pages by offset or keyset", async () => {
    expect(ids(await repo().listed(operator, { status: "ended" }, { limit: 10 }))).toEqual(["s-ended"]);
    expect(ids(await repo().listed(operator, { userId: "rider-2" }, { limit: 10 }))).toEqual(["s-rider2"]);
    expect(await repo().listed(operator, { locationId: fx.location("D1") }, { limit: 10 })).toEqual([]);
    const window = { statusFrom: at(3), statusBefore: at(5) };
    expect(ids(await repo().listed(operator, window, { limit: 10 }))).toEqual(["s-rider2", "s-active"]);
    expect(ids(await repo().listed(operator, {}, { limit: 2, offset: 1 }))).toEqual(["s-rider2", "s-active"]);
    const after = { createdAt: at(4), id: "s-rider2" };
    expect(ids(await repo().listed(operator, { after }, { limit: 10 }))).toEqual(["s-active", "s-ended"]);
  });

  it("finds one of the scope's sessions, for a given user when told", async () => {
    expect((await repo().findListed(operator, "s-ended"))?.payment_id).toBe("p-ended");
    expect((await repo().findListed(operator, "s-rider2", "rider-2"))?.id).toBe("s-rider2");
    expect(await repo().findListed(operator, "s-rider2", "rider-1")).toBeUndefined();
    expect(await repo().findListed(rider, "s-rider2")).toBeUndefined();
    expect(await repo().findListed(operator, "s-expired")).toBeUndefined();
    expect(await repo().findListed({ ...operator, operatorId: OP_B }, "s-ended")).toBeUndefined();
  });

  it("gives the device's active session before any later one, else its latest", async () => {
    expect((await repo().currentOnDevice(operator, LOCKER))?.id).toBe("s-active");
    expect((await repo().currentOnDevice(operator, OTHER))?.id).toBe("s-rider2");
    expect(await repo().currentOnDevice(rider, OTHER)).toBeUndefined();
    expect(await repo().currentOnDevice(operator, fx.device("L1", "1"))).toBeUndefined();
  });

  it("tells whether a device is the operator's", async () => {
    expect(await repo().isOperatorsDevice(OP_A, LOCKER)).toBe(true);
    expect(await repo().isOperatorsDevice(OP_B, LOCKER)).toBe(false);
    expect(await repo().isOperatorsDevice(OP_A, "00000000-0000-4000-8000-000000000000")).toBe(false);
  });

  it("reads the attributes of the location a session is at, nothing for an unknown one", async () => {
    const attrs = await repo().locationAttrs(fx.location("L1"));
    expect(JSON.parse(attrs ?? "{}")).toMatchObject({ max_user_sessions: 2 });
    expect(await repo().locationAttrs("00000000-0000-4000-8000-000000000000")).toBeUndefined();
  });

  it("writes the fee an ended session was billed", async () => {
    await repo().setFee("s-ended", { fee_currency: "EUR", fee_value: "4.00" });
    expect(await repo().find("s-ended")).toMatchObject({ fee_currency: "EUR", fee_value: "4.00" });
    expect(await repo().find("s-active")).toMatchObject({ fee_currency: null, fee_value: null });
  });
});
