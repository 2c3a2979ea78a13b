import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type Actor, decideUse, type Holding, releasesOwn, type Use, type UseFacts } from "./device-use.ts";

const ANN = "ann";
const BOB = "bob";
const ann: Actor = { id: ANN, operator: false };
const operator: Actor = { id: "backend", operator: true };
const FREE: Holding = { inUse: false, occupant: null, booker: null };

const locker = (use: Use, actor: Actor, holding: Holding, hasAccess = true): UseFacts => ({
  family: "locking",
  use,
  actor,
  holding,
  hasAccess,
});

describe("decideUse: what the issue's riders found", () => {
  it("Bob cannot unlock the locker Ann locked; Ann can", () => {
    const annsLock: Holding = { inUse: true, occupant: ANN, booker: null };
    expect(decideUse(locker("unlock", { id: BOB, operator: false }, annsLock))).toEqual({
      allowed: false,
      reason: "held_by_another",
    });
    expect(decideUse(locker("unlock", ann, annsLock))).toEqual({ allowed: true, as: "holder" });
  });

  it("Ann cannot lock or book the locker Bob booked; Bob can lock it", () => {
    const bobsBooking: Holding = { inUse: false, occupant: null, booker: BOB };
    for (const use of ["lock", "book"] as const)
      expect(decideUse(locker(use, ann, bobsBooking))).toEqual({
        allowed: false,
        reason: "booked_by_another",
      });
    expect(decideUse(locker("lock", { id: BOB, operator: false }, bobsBooking)).allowed).toBe(true);
  });

  it("a door opens only for someone with access, or the operator", () => {
    const door = (actor: Actor, hasAccess: boolean): UseFacts => ({
      family: "door",
      use: "unlock",
      actor,
      holding: FREE,
      hasAccess,
    });
    expect(decideUse(door(ann, false))).toEqual({ allowed: false, reason: "no_access" });
    expect(decideUse(door(ann, true))).toEqual({ allowed: true, as: "member" });
    expect(decideUse(door(operator, false))).toEqual({ allowed: true, as: "operator" });
  });

  it("a member removed mid-session still gets their bike out, and nothing else", () => {
    const annsLock: Holding = { inUse: true, occupant: ANN, booker: null };
    expect(decideUse(locker("unlock", ann, annsLock, false)).allowed).toBe(true);
    expect(decideUse(locker("lock", ann, FREE, false))).toEqual({ allowed: false, reason: "no_access" });
  });

  it("cancelling someone else's booking is force-cancel-booking's, even for the operator", () => {
    const bobsBooking: Holding = { inUse: false, occupant: null, booker: BOB };
    expect(decideUse(locker("cancel-booking", operator, bobsBooking)).allowed).toBe(false);
    expect(decideUse(locker("cancel-booking", { id: BOB, operator: false }, bobsBooking)).allowed).toBe(true);
  });

  it("a locker whose latch was never read may be someone's: refused to all but the operator", () => {
    const unknown: Holding = { inUse: null, occupant: null, booker: null };
    expect(decideUse(locker("lock", ann, unknown))).toEqual({ allowed: false, reason: "state_unknown" });
    expect(decideUse(locker("unlock", operator, unknown)).allowed).toBe(true);
  });
});

describe("decideUse properties", () => {
  const person = fc.constantFrom(ANN, BOB, "carol");
  const factsArb: fc.Arbitrary<UseFacts> = fc.record({
    family: fc.constantFrom("locking" as const, "door" as const),
    use: fc.constantFrom<Use>("lock", "book", "unlock", "cancel-booking"),
    actor: fc.record({ id: person, operator: fc.boolean() }),
    holding: fc.record({
      inUse: fc.constantFrom(true, false, null),
      occupant: fc.option(person),
      booker: fc.option(person),
    }),
    hasAccess: fc.boolean(),
  });
  const RUNS = { numRuns: 2_000 };

  it("nobody but the operator uses a locker someone else holds, or one that may be held", () => {
    fc.assert(
      fc.property(factsArb, (f) => {
        const d = decideUse(f);
        if (!d.allowed || f.actor.operator || f.family !== "locking" || releasesOwn(f)) return;
        const { inUse, occupant, booker } = f.holding;
        expect(inUse).not.toBeNull();
        expect(inUse === true && occupant !== f.actor.id).toBe(false);
        expect(booker !== null && booker !== f.actor.id).toBe(false);
      }),
      RUNS,
    );
  });

  it("without access only the holder's release or the operator is allowed", () => {
    fc.assert(
      fc.property(factsArb, (f) => {
        if (f.hasAccess || !decideUse(f).allowed) return;
        expect(releasesOwn(f) || f.actor.operator).toBe(true);
      }),
      RUNS,
    );
  });

  it("only the one in a device releases it, or its booker while nobody is in it", () => {
    const annIn: Holding = { inUse: true, occupant: ANN, booker: BOB };
    expect(releasesOwn({ use: "unlock", actor: ann, holding: annIn })).toBe(true);
    expect(releasesOwn({ use: "unlock", actor: { id: BOB, operator: false }, holding: annIn })).toBe(false);
    const someoneIn: Holding = { inUse: true, occupant: null, booker: ANN };
    expect(releasesOwn({ use: "unlock", actor: ann, holding: someoneIn })).toBe(false);
    expect(releasesOwn({ use: "cancel-booking", actor: ann, holding: someoneIn })).toBe(true);
  });

  it("the holder may always release what they hold, with or without access", () => {
    fc.assert(
      fc.property(factsArb, (f) => {
        if (releasesOwn(f)) expect(decideUse(f)).toEqual({ allowed: true, as: "holder" });
      }),
      RUNS,
    );
  });

  it("the operator may lock, book and unlock anything, and cancels only its own booking", () => {
    fc.assert(
      fc.property(factsArb, (f) => {
        if (!f.actor.operator || f.family !== "locking") return;
        const d = decideUse(f);
        if (f.use !== "cancel-booking") expect(d.allowed).toBe(true);
        else if (f.holding.booker !== null && f.holding.booker !== f.actor.id) expect(d.allowed).toBe(false);
      }),
      RUNS,
    );
  });

  it("a door opens exactly for the operator and those with access", () => {
    fc.assert(
      fc.property(factsArb, (f) => {
        if (f.family !== "door" || f.use !== "unlock" || releasesOwn(f)) return;
        expect(decideUse(f).allowed).toBe(f.actor.operator || f.hasAccess);
      }),
      RUNS,
    );
  });
});
