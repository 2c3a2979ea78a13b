import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type PaymentRow, paymentRepository } from "../../../cloud/sessions/payment-repository.ts";
import { sessionRepository } from "../../../cloud/sessions/session-repository.ts";
import { OP_A, OP_B } from "../../support/fixture-site.ts";
import type { TestDb } from "../../support/test-db.ts";
import { openFixtureStore } from "./fixture-store.ts";
import { sessionRow } from "./session-rows.ts";

const T0 = "2026-01-15T10:00:00.000Z";
const T1 = new Date("2026-01-15T10:05:00.000Z");

const payment = (id: string, sessionId: string, over: Partial<PaymentRow> = {}): PaymentRow => ({
  id,
  operator_id: OP_A,
  session_id: sessionId,
  provider: "manual",
  status: "PENDING",
  created_at: T0,
  updated_at: T0,
  ...over,
});

describe("payment repository", () => {
  let store: TestDb;
  beforeAll(async () => {
    store = await openFixtureStore();
    for (const id of ["s-1", "s-2", "s-3"]) await sessionRepository(store.db).insert(sessionRow(id));
  });
  afterAll(() => store.drop());
  const repo = () => paymentRepository(store.db);

  it("opens a payment with the first entry of its history", async () => {
    await repo().open(payment("p-1", "s-1"), "session-end");
    expect(await repo().find("p-1")).toEqual(payment("p-1", "s-1"));
    expect(await repo().changesOf("p-1")).toEqual([
      { seq: 1, from_status: null, to_status: "PENDING", actor: "session-end", changed_at: T0 },
    ]);
    expect(await repo().find("p-none")).toBeUndefined();
    expect(await repo().changesOf("p-none")).toEqual([]);
  });

  it("finds a payment for its operator only", async () => {
    expect((await repo().findForOperator(OP_A, "p-1"))?.id).toBe("p-1");
    expect(await repo().findForOperator(OP_B, "p-1")).toBeUndefined();
  });

  it("gives the payment of each session that has one", async () => {
    await repo().open(payment("p-2", "s-2", { status: "NOT_CHARGED" }), "session-end");
    const bySession = await repo().ofSessions(["s-1", "s-2", "s-3"]);
    expect([...bySession.keys()].sort()).toEqual(["s-1", "s-2"]);
    expect(bySession.get("s-2")?.id).toBe("p-2");
    expect(await repo().ofSessions([])).toEqual(new Map());
  });

  it("moves a payment's status only from the status it has, and records each move", async () => {
    expect(await repo().compareAndSetStatus("p-1", "PAID", "CANCELED", "operator", T1)).toBe(false);
    expect(await repo().compareAndSetStatus("p-1", "PENDING", "PAID", "operator", T1)).toBe(true);
    expect(await repo().compareAndSetStatus("p-1", "PENDING", "CANCELED", "operator", T1)).toBe(false);
    expect(await repo().find("p-1")).toMatchObject({ status: "PAID", updated_at: T1.toISOString() });
    expect(await repo().changesOf("p-1")).toEqual([
      { seq: 1, from_status: null, to_status: "PENDING", actor: "session-end", changed_at: T0 },
      { seq: 2, from_status: "PENDING", to_status: "PAID", actor: "operator", changed_at: T1.toISOString() },
    ]);
    expect(await repo().compareAndSetStatus("p-none", "PENDING", "PAID", "operator", T1)).toBe(false);
  });
});
