import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  type AlarmAction,
  type AlarmActor,
  type AlarmChange,
  type AlarmLife,
  isOpen,
  moveAlarm,
  raiseAlarm,
  SYSTEM_ACTOR,
} from "./alarm-machine.ts";

const T0 = "2026-01-01T00:00:00.000Z";
const at = (k: number) => new Date(Date.parse(T0) + k * 1_000).toISOString();
const STAFF: AlarmActor = { kind: "staff", id: "st-1" };
const CLIENT: AlarmActor = { kind: "client", id: "a-admin" };

describe("alarm lifecycle", () => {
  it("a raised alarm is ACTIVE, once, unacknowledged, unassigned and not cleared", () => {
    const { life, change } = raiseAlarm(SYSTEM_ACTOR, T0);
    expect(life).toEqual({
      status: "ACTIVE",
      occurrences: 1,
      raised_at: T0,
      updated_at: T0,
      last_occurred_at: T0,
      acknowledged: null,
      assignee: null,
      cleared: null,
    });
    expect(change).toEqual({ action: "raise", by: SYSTEM_ACTOR, at: T0, note: "", status: "ACTIVE" });
  });

  it("ACTIVE → ACKNOWLEDGED with the note and who, then → CLEARED", () => {
    const { life } = raiseAlarm(SYSTEM_ACTOR, T0);
    const acked = moveAlarm(life, { kind: "acknowledge", note: "on my way" }, STAFF, at(1));
    expect(acked.ok && acked.life.acknowledged).toEqual({ by: STAFF, at: at(1), note: "on my way" });
    if (!acked.ok) throw new Error(acked.message);
    const cleared = moveAlarm(acked.life, { kind: "clear", note: "fixed" }, CLIENT, at(2));
    expect(cleared.ok && cleared.life).toMatchObject({
      status: "CLEARED",
      cleared: { by: CLIENT, at: at(2), note: "fixed" },
      acknowledged: { by: STAFF },
      updated_at: at(2),
    });
  });

  it("ACTIVE → CLEARED by the system, without an acknowledgement", () => {
    const { life } = raiseAlarm(SYSTEM_ACTOR, T0);
    const cleared = moveAlarm(life, { kind: "clear", note: "back online" }, SYSTEM_ACTOR, at(1));
    expect(cleared.ok && cleared.life.status).toBe("CLEARED");
    expect(cleared.ok && cleared.change).toEqual({
      action: "clear",
      by: SYSTEM_ACTOR,
      at: at(1),
      note: "back online",
      status: "CLEARED",
    });
  });

  it("a repeat while open is counted and keeps the status; assignment may change while open", () => {
    const { life } = raiseAlarm(SYSTEM_ACTOR, T0);
    const acked = moveAlarm(life, { kind: "acknowledge", note: "" }, STAFF, at(1));
    if (!acked.ok) throw new Error(acked.message);
    const again = moveAlarm(acked.life, { kind: "occur" }, SYSTEM_ACTOR, at(2));
    expect(again.ok && again.life).toMatchObject({
      status: "ACKNOWLEDGED",
      occurrences: 2,
      last_occurred_at: at(2),
      raised_at: T0,
    });
    const assigned = moveAlarm(life, { kind: "assign", assignee: STAFF }, CLIENT, at(3));
    expect(assigned.ok && assigned.life.assignee).toEqual(STAFF);
    expect(assigned.ok && assigned.change.assignee).toEqual(STAFF);
  });

  it.each([
    [{ kind: "acknowledge", note: "" }, /already ACKNOWLEDGED/, true],
    [{ kind: "acknowledge", note: "" }, /final/, false],
    [{ kind: "clear", note: "" }, /final/, false],
    [{ kind: "assign", assignee: STAFF }, /final/, false],
    [{ kind: "occur" }, /final/, false],
  ] as const)("%o is refused (acknowledged first: %s)", (action, message, acknowledgedFirst) => {
    const { life } = raiseAlarm(SYSTEM_ACTOR, T0);
    const first = moveAlarm(
      life,
      acknowledgedFirst ? { kind: "acknowledge", note: "" } : { kind: "clear", note: "" },
      STAFF,
      at(1),
    );
    if (!first.ok) throw new Error(first.message);
    const move = moveAlarm(first.life, action, STAFF, at(2));
    expect(move.ok).toBe(false);
    if (!move.ok) expect(move.message).toMatch(message);
  });
});

describe("alarm lifecycle properties", () => {
  const actorArb = fc.record({
    kind: fc.constantFrom("staff" as const, "client" as const, "system" as const),
    id: fc.string({ minLength: 1, maxLength: 8 }),
  });
  const actionArb: fc.Arbitrary<AlarmAction> = fc.oneof(
    fc.constant({ kind: "occur" as const }),
    fc.record({ kind: fc.constant("acknowledge" as const), note: fc.string({ maxLength: 10 }) }),
    fc.record({ kind: fc.constant("assign" as const), assignee: fc.option(actorArb, { nil: null }) }),
    fc.record({ kind: fc.constant("clear" as const), note: fc.string({ maxLength: 10 }) }),
  );
  const walkArb = fc.array(fc.tuple(actionArb, actorArb), { maxLength: 30 });

  /** Applies every action in order; returns each life, and the history of the ones the machine took. */
  function walk(steps: [AlarmAction, AlarmActor][]): { lives: AlarmLife[]; history: AlarmChange[] } {
    const first = raiseAlarm(SYSTEM_ACTOR, T0);
    const lives = [first.life];
    const history = [first.change];
    steps.forEach(([action, by], k) => {
      const last = lives.at(-1) as AlarmLife;
      const move = moveAlarm(last, action, by, at(k + 1));
      if (!move.ok) return;
      lives.push(move.life);
      history.push(move.change);
    });
    return { lives, history };
  }

  it("status only moves forward (ACTIVE → ACKNOWLEDGED → CLEARED) and CLEARED never changes again", () => {
    const rank = { ACTIVE: 0, ACKNOWLEDGED: 1, CLEARED: 2 };
    fc.assert(
      fc.property(walkArb, (steps) => {
        const { lives } = walk(steps);
        for (let k = 1; k < lives.length; k++) {
          const [a, b] = [lives[k - 1] as AlarmLife, lives[k] as AlarmLife];
          expect(rank[b.status]).toBeGreaterThanOrEqual(rank[a.status]);
          expect(isOpen(a.status)).toBe(true);
        }
      }),
    );
  });

  it("the occurrence count is one plus every accepted repeat, and never goes down", () => {
    fc.assert(
      fc.property(walkArb, (steps) => {
        const { lives, history } = walk(steps);
        const last = lives.at(-1) as AlarmLife;
        expect(last.occurrences).toBe(1 + history.filter((c) => c.action === "occur").length);
      }),
    );
  });

  it("each accepted change is one history entry whose status and time are the alarm's after it", () => {
    fc.assert(
      fc.property(walkArb, (steps) => {
        const { lives, history } = walk(steps);
        expect(history).toHaveLength(lives.length);
        lives.forEach((life, k) => {
          expect(history[k]?.status).toBe(life.status);
          expect(history[k]?.at).toBe(life.updated_at);
        });
      }),
    );
  });

  it("acknowledged and cleared record who and when exactly as their history entries do, once", () => {
    fc.assert(
      fc.property(walkArb, (steps) => {
        const { lives, history } = walk(steps);
        const last = lives.at(-1) as AlarmLife;
        const acks = history.filter((c) => c.action === "acknowledge");
        const clears = history.filter((c) => c.action === "clear");
        expect(acks.length).toBeLessThanOrEqual(1);
        expect(clears.length).toBeLessThanOrEqual(1);
        expect(last.acknowledged).toEqual(
          acks[0] ? { by: acks[0].by, at: acks[0].at, note: acks[0].note } : null,
        );
        expect(last.cleared).toEqual(
          clears[0] ? { by: clears[0].by, at: clears[0].at, note: clears[0].note } : null,
        );
        expect(last.status === "CLEARED").toBe(clears.length === 1);
      }),
    );
  });
});
