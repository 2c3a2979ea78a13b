import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  initialPaymentStatus,
  isFinalPayment,
  movePayment,
  PAYMENT_STATUSES,
  PAYMENT_TRANSITIONS,
  type PaymentStatus,
} from "./payment-machine.ts";

const INITIAL = [initialPaymentStatus(true), initialPaymentStatus(false)];

/** Every status reachable from the initial ones, by breadth-first search over the transitions. */
function reachable(): Set<PaymentStatus> {
  const seen = new Set<PaymentStatus>(INITIAL);
  const queue = [...INITIAL];
  for (let s = queue.shift(); s; s = queue.shift()) {
    for (const n of PAYMENT_TRANSITIONS[s]) {
      if (!seen.has(n)) {
        seen.add(n);
        queue.push(n);
      }
    }
  }
  return seen;
}

describe("payment status", () => {
  it("a chargeable session's payment starts PENDING; one that is not chargeable is NOT_CHARGED", () => {
    expect(initialPaymentStatus(true)).toBe("PENDING");
    expect(initialPaymentStatus(false)).toBe("NOT_CHARGED");
  });

  it("every status of the spec is reachable", () => {
    expect([...reachable()].sort()).toEqual([...PAYMENT_STATUSES].sort());
  });

  it("REFUNDED, CANCELED and NOT_CHARGED are final", () => {
    for (const s of PAYMENT_STATUSES)
      expect(isFinalPayment(s), s).toBe(["REFUNDED", "CANCELED", "NOT_CHARGED"].includes(s));
  });

  it.each([
    ["PENDING", "PAID"],
    ["PENDING", "NEEDS_APPROVAL"],
    ["NEEDS_APPROVAL", "APPROVED"],
    ["APPROVED", "PAID"],
    ["PAID", "REFUNDED"],
    ["PAID", "REFUND_FAILED"],
    ["REFUND_FAILED", "REFUNDED"],
    ["PAYMENT_FAILED", "PENDING"],
    ["PENDING", "NOT_CHARGED"],
  ] as const)("%s → %s is allowed", (from, to) => {
    expect(movePayment(from, to)).toEqual({ ok: true, status: to });
  });

  it.each([
    ["PENDING", "REFUNDED", /can become .*not REFUNDED/],
    ["NOT_CHARGED", "PAID", /final/],
    ["REFUNDED", "PAID", /final/],
    ["PAID", "PAID", /not PAID/],
    ["NEEDS_APPROVAL", "PAID", /not PAID/],
  ] as const)("%s → %s is refused with a message naming the way forward", (from, to, message) => {
    const move = movePayment(from, to);
    expect(move.ok).toBe(false);
    if (!move.ok) expect(move.message).toMatch(message);
  });
});

describe("payment status properties", () => {
  const walkArb = fc.record({
    chargeable: fc.boolean(),
    asks: fc.array(fc.constantFrom(...PAYMENT_STATUSES), { maxLength: 30 }),
  });

  /** Applies every asked status the machine allows, in order; returns the path taken. */
  function walk(chargeable: boolean, asks: PaymentStatus[]): PaymentStatus[] {
    const path = [initialPaymentStatus(chargeable)];
    for (const to of asks) {
      const move = movePayment(path.at(-1) as PaymentStatus, to);
      if (move.ok) path.push(move.status);
    }
    return path;
  }

  it("no sequence of marks leaves PAYMENT_STATUSES, and a move always changes the status", () => {
    fc.assert(
      fc.property(walkArb, ({ chargeable, asks }) => {
        const path = walk(chargeable, asks);
        for (const s of path) expect(PAYMENT_STATUSES).toContain(s);
        for (let i = 1; i < path.length; i++) expect(path[i]).not.toBe(path[i - 1]);
      }),
    );
  });

  it("money is refunded (or its refund fails) only after it was paid", () => {
    fc.assert(
      fc.property(walkArb, ({ chargeable, asks }) => {
        const path = walk(chargeable, asks);
        const firstRefund = path.findIndex((s) => s === "REFUNDED" || s === "REFUND_FAILED");
        if (firstRefund >= 0) expect(path.slice(0, firstRefund)).toContain("PAID");
      }),
    );
  });

  it("a session that was not chargeable never collects anything", () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...PAYMENT_STATUSES)), (asks) => {
        expect(walk(false, asks)).toEqual(["NOT_CHARGED"]);
      }),
    );
  });

  it("once final, every further mark is refused", () => {
    fc.assert(
      fc.property(walkArb, ({ chargeable, asks }) => {
        const path = walk(chargeable, asks);
        const final = path.findIndex(isFinalPayment);
        if (final >= 0) expect(final).toBe(path.length - 1);
      }),
    );
  });

  it("approval comes before payment: NEEDS_APPROVAL never goes straight to PAID", () => {
    fc.assert(
      fc.property(walkArb, ({ chargeable, asks }) => {
        const path = walk(chargeable, asks);
        for (let i = 1; i < path.length; i++)
          if (path[i - 1] === "NEEDS_APPROVAL") expect(["APPROVED", "CANCELED"]).toContain(path[i]);
      }),
    );
  });
});
