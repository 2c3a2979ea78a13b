import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  ACCESS_LIST_KINDS,
  addPeriods,
  grantsAccess,
  INVITE_LIFETIME_MS,
  inviteExpiry,
  inviteStatus,
  type Membership,
  membershipStatus,
  newMembership,
  nextPaymentAt,
  PAYMENT_PERIODS,
  periodEndAfter,
  removeMembership,
  renewMembership,
} from "./membership.ts";

const T0 = Date.parse("2024-01-31T09:30:00.000Z");
const DAY = 24 * 3600_000;
const at = (iso: string) => new Date(iso);

const instant = fc.integer({ min: 0, max: 800 * DAY }).map((ms) => new Date(T0 + ms));
const period = fc.constantFrom(...PAYMENT_PERIODS);
const kind = fc.constantFrom(...ACCESS_LIST_KINDS);
const terms = fc.record(
  { period: fc.option(period, { nil: undefined }), recurring: fc.option(fc.boolean(), { nil: undefined }) },
  { requiredKeys: [] },
);

/** A membership as a history of adds and removals leaves it: joined, maybe renewed, maybe removed. */
const history = fc.record({
  kind,
  joined: instant,
  asked: terms,
  steps: fc.array(
    fc.oneof(
      fc.record({ op: fc.constant("renew" as const), after: fc.nat(60 * DAY), asked: terms }),
      fc.record({ op: fc.constant("remove" as const), after: fc.nat(60 * DAY), now: fc.boolean() }),
    ),
    { maxLength: 5 },
  ),
});

type History = typeof history extends fc.Arbitrary<infer H> ? H : never;

function play(h: History) {
  let m = newMembership(h.kind, h.asked, h.joined);
  let t = h.joined.getTime();
  for (const s of h.steps) {
    t += s.after;
    const now = new Date(t);
    if (s.op === "renew") {
      if (grantsAccess(membershipStatus(m, now))) m = renewMembership(m, h.kind, s.asked, now);
    } else m = removeMembership(m, h.kind, s.now, now);
  }
  return { m, last: new Date(t) };
}

describe("payment periods", () => {
  it("months keep the anchor's day, or the month's last day when it is shorter", () => {
    const jan31 = at("2024-01-31T09:30:00.000Z");
    expect(addPeriods(jan31, "month", 1).toISOString()).toBe("2024-02-29T09:30:00.000Z");
    expect(addPeriods(jan31, "month", 2).toISOString()).toBe("2024-03-31T09:30:00.000Z");
    expect(addPeriods(jan31, "month", 13).toISOString()).toBe("2025-02-28T09:30:00.000Z");
    expect(addPeriods(jan31, "week", 1).toISOString()).toBe("2024-02-07T09:30:00.000Z");
  });

  it("the running period ends at the first boundary after now, and the one before is not after now", () => {
    fc.assert(
      fc.property(instant, period, fc.integer({ min: -40 * DAY, max: 900 * DAY }), (anchor, p, dt) => {
        const now = new Date(anchor.getTime() + dt);
        const end = periodEndAfter(anchor, p, now);
        if (dt < 0) {
          expect(end).toEqual(anchor);
          return;
        }
        expect(end.getTime()).toBeGreaterThan(now.getTime());
        // The end is a boundary: k periods from the anchor, and the previous boundary is not after now.
        let k = 1;
        while (addPeriods(anchor, p, k).getTime() < end.getTime()) k++;
        expect(addPeriods(anchor, p, k)).toEqual(end);
        expect(addPeriods(anchor, p, k - 1).getTime()).toBeLessThanOrEqual(now.getTime());
        const len = end.getTime() - addPeriods(anchor, p, k - 1).getTime();
        const bounds = { day: [DAY, DAY], week: [7 * DAY, 7 * DAY], month: [28 * DAY, 31 * DAY] }[p];
        expect(len).toBeGreaterThanOrEqual(bounds[0] as number);
        expect(len).toBeLessThanOrEqual(bounds[1] as number);
      }),
    );
  });
});

describe("membership status", () => {
  it("a new membership is included:active; a paid one that does not renew expires with its first period", () => {
    fc.assert(
      fc.property(kind, terms, instant, (k, asked, joined) => {
        const m = newMembership(k, asked, joined);
        expect(membershipStatus(m, joined)).toBe("included:active");
        if (k !== "paid") {
          expect(m.period).toBeNull();
          expect(m.endsAt).toBeNull();
          expect(nextPaymentAt(m, k, joined)).toBeNull();
          return;
        }
        const p = asked.period ?? "month";
        const end = addPeriods(joined, p, 1);
        if (asked.recurring === false) {
          expect(m.endsAt).toBe(end.toISOString());
          expect(membershipStatus(m, new Date(end.getTime() - 1))).toBe("included:active");
          expect(membershipStatus(m, end)).toBe("excluded:expired");
          expect(nextPaymentAt(m, k, joined)).toBeNull();
        } else {
          expect(m.endsAt).toBeNull();
          expect(nextPaymentAt(m, k, joined)).toEqual(end);
        }
      }),
    );
  });

  it("whatever happened, access once lost stays lost as time goes on (until someone adds the member again)", () => {
    fc.assert(
      fc.property(history, fc.nat(400 * DAY), fc.nat(400 * DAY), (h, d1, d2) => {
        const { m, last } = play(h);
        const t1 = new Date(last.getTime() + d1);
        const t2 = new Date(t1.getTime() + d2);
        if (!grantsAccess(membershipStatus(m, t1))) expect(grantsAccess(membershipStatus(m, t2))).toBe(false);
      }),
    );
  });

  it("the next payment, when there is one, is after now and the membership is running", () => {
    fc.assert(
      fc.property(history, fc.nat(400 * DAY), (h, d) => {
        const { m, last } = play(h);
        const now = new Date(last.getTime() + d);
        const next = nextPaymentAt(m, h.kind, now);
        if (next === null) return;
        expect(h.kind).toBe("paid");
        expect(next.getTime()).toBeGreaterThan(now.getTime());
        expect(membershipStatus(m, now)).toBe("included:active");
      }),
    );
  });
});

describe("removal", () => {
  it("closed and password lists, and remove_now, end access at once: excluded:removed", () => {
    fc.assert(
      fc.property(history, fc.boolean(), fc.nat(60 * DAY), (h, removeNow, d) => {
        const { m, last } = play(h);
        const now = new Date(last.getTime() + d);
        if (!grantsAccess(membershipStatus(m, now))) return;
        if (h.kind === "paid" && !removeNow) return;
        const r = removeMembership(m, h.kind, removeNow, now);
        expect(membershipStatus(r, now)).toBe("excluded:removed");
      }),
    );
  });

  it("a paid member removed without remove_now keeps access as included:cancelled until the period ends", () => {
    fc.assert(
      fc.property(terms, instant, fc.nat(120 * DAY), (asked, joined, d) => {
        const m = newMembership("paid", asked, joined);
        const now = new Date(joined.getTime() + d);
        if (!grantsAccess(membershipStatus(m, now))) return;
        const r = removeMembership(m, "paid", false, now);
        const end = periodEndAfter(joined, asked.period ?? "month", now);
        expect(r.endsAt).toBe(end.toISOString());
        expect(membershipStatus(r, now)).toBe("included:cancelled");
        expect(membershipStatus(r, new Date(end.getTime() - 1))).toBe("included:cancelled");
        expect(membershipStatus(r, end)).toBe("excluded:removed");
        expect(nextPaymentAt(r, "paid", now)).toBeNull();
        // remove_now later cuts the remaining period short.
        expect(membershipStatus(removeMembership(r, "paid", true, now), now)).toBe("excluded:removed");
      }),
    );
  });

  it("removing a membership that is already over changes nothing", () => {
    fc.assert(
      fc.property(history, kind, fc.boolean(), fc.nat(400 * DAY), (h, k, removeNow, d) => {
        const { m, last } = play(h);
        const now = new Date(last.getTime() + d);
        if (grantsAccess(membershipStatus(m, now))) return;
        expect(removeMembership(m, k, removeNow, now)).toEqual(m);
      }),
    );
  });
});

describe("adding a current member again", () => {
  it("withdraws a removal waiting for the period end", () => {
    const joined = at("2024-03-01T00:00:00.000Z");
    const m = newMembership("paid", { period: "month" }, joined);
    const now = at("2024-03-10T00:00:00.000Z");
    const cancelled = removeMembership(m, "paid", false, now);
    expect(membershipStatus(cancelled, now)).toBe("included:cancelled");
    const renewed = renewMembership(cancelled, "paid", {}, now);
    expect(membershipStatus(renewed, at("2024-06-01T00:00:00.000Z"))).toBe("included:active");
    expect(nextPaymentAt(renewed, "paid", now)?.toISOString()).toBe("2024-04-01T00:00:00.000Z");
  });

  it("new terms start when the running period ends; a member who stops renewing keeps the period paid for", () => {
    fc.assert(
      fc.property(period, period, fc.boolean(), instant, fc.nat(90 * DAY), (p1, p2, recurring, joined, d) => {
        const m = newMembership("paid", { period: p1, recurring: true }, joined);
        const now = new Date(joined.getTime() + d);
        const end = periodEndAfter(joined, p1, now);
        const r = renewMembership(m, "paid", { period: p2, recurring }, now);
        expect(membershipStatus(r, now)).toBe("included:active");
        if (recurring) {
          expect(r.endsAt).toBeNull();
          expect(nextPaymentAt(r, "paid", now)).toEqual(end);
          // After the running period, boundaries follow the new period (counted from the join if unchanged).
          const after = p1 === p2 ? periodEndAfter(joined, p1, end) : addPeriods(end, p2, 1);
          expect(nextPaymentAt(r, "paid", end)).toEqual(after);
        } else {
          expect(r.endsAt).toBe(end.toISOString());
          expect(membershipStatus(r, end)).toBe("excluded:expired");
        }
      }),
    );
  });

  it("on closed and password lists payment terms stay empty", () => {
    fc.assert(
      fc.property(
        fc.constantFrom("closed" as const, "password" as const),
        terms,
        instant,
        (k, asked, now) => {
          const m: Membership = renewMembership(newMembership(k, asked, now), k, asked, now);
          expect([m.period, m.recurring, m.endsAt]).toEqual([null, null, null]);
        },
      ),
    );
  });
});

describe("phone invites", () => {
  it("are invited until their expiry, then excluded:expired", () => {
    fc.assert(
      fc.property(instant, fc.integer({ min: 0, max: 2 * INVITE_LIFETIME_MS }), (made, d) => {
        const expires = inviteExpiry(made);
        const now = new Date(made.getTime() + d);
        expect(inviteStatus(expires, now)).toBe(d < INVITE_LIFETIME_MS ? "invited" : "excluded:expired");
      }),
    );
  });
});
