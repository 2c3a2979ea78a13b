import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  applySessionEvent,
  billedFrom,
  deriveSession,
  isExpiredPending,
  NEW_SESSION,
  nextSessionStatus,
  PENDING_LIFETIME_MS,
  SESSION_EVENT_NAMES,
  SESSION_STATUSES,
  type SessionEvent,
  type SessionEventName,
  type SessionStatus,
  type SessionView,
  statusTime,
} from "./session-machine.ts";

const T0 = Date.parse("2026-01-15T10:00:00.000Z");
const iso = (ms: number) => new Date(T0 + ms).toISOString();
const book = (ms: number, untilMs = ms + 3_600_000): SessionEvent => ({
  name: "book",
  timestamp: iso(ms),
  booked_until: iso(untilMs),
});
const start = (ms: number): SessionEvent => ({ name: "start", timestamp: iso(ms) });
const end = (ms: number): SessionEvent => ({ name: "end", timestamp: iso(ms) });
const RANK: Record<SessionStatus, number> = { pending: 0, booked: 1, active: 2, ended: 3 };

describe("session status: the spec's table", () => {
  it("a new session is pending with no times", () => {
    expect(deriveSession([])).toEqual({
      status: "pending",
      booked_time: null,
      booked_until_time: null,
      start_time: null,
      end_time: null,
    });
  });

  it("pending → booked on book, with booked_time and booked_until_time", () => {
    expect(deriveSession([book(0, 5_000)])).toEqual({
      ...NEW_SESSION,
      status: "booked",
      booked_time: iso(0),
      booked_until_time: iso(5_000),
    });
  });

  it("pending → active directly on start, skipping booked", () => {
    expect(deriveSession([start(10)])).toMatchObject({
      status: "active",
      start_time: iso(10),
      booked_time: null,
    });
  });

  it("booked → active on start, keeping the booking's times", () => {
    expect(deriveSession([book(0), start(60_000)])).toMatchObject({
      status: "active",
      booked_time: iso(0),
      start_time: iso(60_000),
    });
  });

  it("active → ended on end, with end_time", () => {
    expect(deriveSession([start(0), end(90_000)])).toMatchObject({
      status: "ended",
      start_time: iso(0),
      end_time: iso(90_000),
    });
  });

  it("booked → ended when a booking ends before the lock (cancelled or expired)", () => {
    expect(deriveSession([book(0), end(120_000)])).toMatchObject({
      status: "ended",
      start_time: null,
      end_time: iso(120_000),
    });
  });

  it.each([
    ["pending", "end"],
    ["booked", "book"],
    ["active", "book"],
    ["active", "start"],
    ["ended", "book"],
    ["ended", "start"],
    ["ended", "end"],
  ] as const)("%s refuses %s", (status, name) => {
    expect(nextSessionStatus(status, name)).toBeNull();
  });

  it("a history the machine refuses does not fold", () => {
    expect(() => deriveSession([start(0), start(1)])).toThrow(/does not fold/);
  });

  it("bills from the booking when there was one, else from the start", () => {
    expect(billedFrom(deriveSession([book(0), start(5), end(9)]))).toBe(iso(0));
    expect(billedFrom(deriveSession([start(5), end(9)]))).toBe(iso(5));
    expect(billedFrom(deriveSession([]))).toBeNull();
  });

  it("filters by the time of the event that gave the status, creation for pending", () => {
    const created = iso(-1);
    expect(statusTime(deriveSession([]), created)).toBe(created);
    expect(statusTime(deriveSession([book(0)]), created)).toBe(iso(0));
    expect(statusTime(deriveSession([book(0), start(5)]), created)).toBe(iso(5));
    expect(statusTime(deriveSession([book(0), start(5), end(9)]), created)).toBe(iso(9));
  });

  it("a pending session expires exactly 30 days after its creation; other statuses never do", () => {
    expect(isExpiredPending("pending", iso(0), new Date(T0 + PENDING_LIFETIME_MS - 1))).toBe(false);
    expect(isExpiredPending("pending", iso(0), new Date(T0 + PENDING_LIFETIME_MS))).toBe(true);
    for (const s of ["booked", "active", "ended"] as const)
      expect(isExpiredPending(s, iso(0), new Date(T0 + 10 * PENDING_LIFETIME_MS))).toBe(false);
  });
});

describe("session status properties", () => {
  const eventArb = fc
    .record({ name: fc.constantFrom(...SESSION_EVENT_NAMES), dt: fc.integer({ min: 0, max: 600_000 }) })
    .map(({ name, dt }) => ({ name, dt }));
  const stepsArb = fc.array(eventArb, { maxLength: 12 });

  /** Feeds the events in order at increasing times, keeping what the machine accepted. */
  function walk(steps: { name: SessionEventName; dt: number }[]) {
    let view: SessionView = NEW_SESSION;
    let now = 0;
    const accepted: SessionEvent[] = [];
    const visits: { prev: SessionView; next: SessionView | null; event: SessionEvent }[] = [];
    for (const { name, dt } of steps) {
      now += dt;
      const event: SessionEvent = name === "book" ? book(now) : { name, timestamp: iso(now) };
      const next = applySessionEvent(view, event);
      visits.push({ prev: view, next, event });
      if (next) {
        accepted.push(event);
        view = next;
      }
    }
    return { view, accepted, visits };
  }

  it("every status is one of SESSION_STATUSES and never moves backwards", () => {
    fc.assert(
      fc.property(stepsArb, (steps) => {
        for (const { prev, next } of walk(steps).visits) {
          if (!next) continue;
          expect(SESSION_STATUSES).toContain(next.status);
          expect(RANK[next.status]).toBeGreaterThan(RANK[prev.status]);
        }
      }),
    );
  });

  it("the status is always what folding the accepted events gives (derived, never stored alone)", () => {
    fc.assert(
      fc.property(stepsArb, (steps) => {
        const { view, accepted } = walk(steps);
        expect(deriveSession(accepted)).toEqual(view);
      }),
    );
  });

  it("each event name is accepted at most once, and end is always the last event", () => {
    fc.assert(
      fc.property(stepsArb, (steps) => {
        const { accepted } = walk(steps);
        const names = accepted.map((e) => e.name);
        expect(new Set(names).size).toBe(names.length);
        if (names.includes("end")) expect(names.at(-1)).toBe("end");
        if (names.includes("book") && names.includes("start"))
          expect(names.indexOf("book")).toBeLessThan(names.indexOf("start"));
      }),
    );
  });

  it("the times match the status: set exactly by their events, and in event order", () => {
    fc.assert(
      fc.property(stepsArb, (steps) => {
        const { view, accepted } = walk(steps);
        const at = (n: SessionEventName) => accepted.find((e) => e.name === n)?.timestamp ?? null;
        expect(view.booked_time).toBe(at("book"));
        expect(view.start_time).toBe(at("start"));
        expect(view.end_time).toBe(at("end"));
        expect(view.booked_until_time === null).toBe(view.booked_time === null);
        expect(view.status === "active").toBe(view.start_time !== null && view.end_time === null);
        expect(view.status === "ended").toBe(view.end_time !== null);
        expect(view.status === "pending").toBe(accepted.length === 0);
        const times = [view.booked_time, view.start_time, view.end_time].filter((t) => t !== null);
        expect([...times].sort()).toEqual(times);
        // An ended session always began: it has something to bill from.
        if (view.status === "ended") expect(billedFrom(view)).not.toBeNull();
      }),
    );
  });

  it("a refused event leaves the session exactly as it was", () => {
    fc.assert(
      fc.property(stepsArb, (steps) => {
        for (const { prev, next, event } of walk(steps).visits)
          if (!next) expect(nextSessionStatus(prev.status, event.name)).toBeNull();
      }),
    );
  });
});
