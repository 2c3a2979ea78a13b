import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  DEAD_AFTER_MS,
  deriveHealth,
  HEALTH_VALUES,
  type Health,
  type HealthInput,
  isOnline,
  LONG_DEAD_AFTER_MS,
  legacyHealth,
  nextHealthChange,
  UNHEALTHY_AFTER_MS,
} from "./health.ts";

const T0 = Date.parse("2024-05-01T10:00:00.000Z");
const at = (ms: number) => new Date(T0 + ms);
const iso = (ms: number) => at(ms).toISOString();
const HOUR = 60 * 60 * 1000;
const seenAt = (ms: number, offline: number | null = null): HealthInput => ({
  last_seen_at: iso(ms),
  offline_at: offline === null ? null : iso(offline),
});
const RANK: Record<Health, number> = { HEALTHY: 0, UNHEALTHY: 1, DEAD: 2, LONG_DEAD: 3 };

describe("device health from heartbeats", () => {
  it("the thresholds are 15 s, 30 s and 2 h", () => {
    expect([UNHEALTHY_AFTER_MS, DEAD_AFTER_MS, LONG_DEAD_AFTER_MS]).toEqual([15_000, 30_000, 2 * HOUR]);
  });

  it("a device heard from less than 15 s ago is HEALTHY", () => {
    expect(deriveHealth(seenAt(0), at(0))).toEqual({ health: "HEALTHY", dead_since: null });
    expect(deriveHealth(seenAt(0), at(14_999))).toEqual({ health: "HEALTHY", dead_since: null });
  });

  it("a device silent for 15 s is UNHEALTHY but not yet dead", () => {
    expect(deriveHealth(seenAt(0), at(15_000))).toEqual({ health: "UNHEALTHY", dead_since: null });
    expect(deriveHealth(seenAt(0), at(29_999))).toEqual({ health: "UNHEALTHY", dead_since: null });
  });

  it("a device silent for 30 s is DEAD since 30 s after its last heartbeat", () => {
    expect(deriveHealth(seenAt(1_000), at(31_000))).toEqual({ health: "DEAD", dead_since: iso(31_000) });
    expect(deriveHealth(seenAt(1_000), at(31_000 + 2 * HOUR - 1))).toEqual({
      health: "DEAD",
      dead_since: iso(31_000),
    });
  });

  it("a device dead for 2 hours is LONG_DEAD and keeps its dead_since", () => {
    expect(deriveHealth(seenAt(1_000), at(31_000 + 2 * HOUR))).toEqual({
      health: "LONG_DEAD",
      dead_since: iso(31_000),
    });
  });

  it("an offline report newer than the last heartbeat makes the device DEAD at once", () => {
    expect(deriveHealth(seenAt(0, 5_000), at(5_000))).toEqual({ health: "DEAD", dead_since: iso(5_000) });
    expect(deriveHealth(seenAt(0, 5_000), at(5_000 + 2 * HOUR))).toEqual({
      health: "LONG_DEAD",
      dead_since: iso(5_000),
    });
  });

  it("an offline report with no heartbeat ever makes the device DEAD since the report", () => {
    expect(deriveHealth({ last_seen_at: null, offline_at: iso(0) }, at(1_000))).toEqual({
      health: "DEAD",
      dead_since: iso(0),
    });
  });

  it("an offline report older than the last heartbeat is ignored", () => {
    expect(deriveHealth(seenAt(10_000, 0), at(11_000))).toEqual({ health: "HEALTHY", dead_since: null });
  });

  it("a device never heard of has no health", () => {
    expect(deriveHealth({ last_seen_at: null, offline_at: null }, at(0))).toBeNull();
    expect(isOnline(null)).toBe(false);
    expect(legacyHealth(null)).toBeNull();
  });

  // An offline report newer than the last heartbeat makes a device dead at once, but never later than
  // silence alone did: a device LONG_DEAD for hours stays LONG_DEAD, not revived to DEAD by the report.
  it("a gateway going offline long after the device stopped does not move dead_since forward", () => {
    expect(deriveHealth(seenAt(0), at(3 * HOUR))).toEqual({ health: "LONG_DEAD", dead_since: iso(30_000) });
    expect(deriveHealth(seenAt(0, 3 * HOUR), at(3 * HOUR + 1_000))).toEqual({
      health: "LONG_DEAD",
      dead_since: iso(30_000),
    });
  });

  it("LONG_DEAD counts as DEAD for the deprecated heartbeat_health and only live states are online", () => {
    expect(legacyHealth({ health: "LONG_DEAD", dead_since: iso(0) })).toBe("DEAD");
    expect(HEALTH_VALUES.filter((health) => isOnline({ health, dead_since: null }))).toEqual([
      "HEALTHY",
      "UNHEALTHY",
    ]);
  });
});

describe("device health properties", () => {
  const msArb = fc.integer({ min: 0, max: 10 * HOUR });
  /** Inputs plus two moments `now` ≤ `later`, both no earlier than the reports they read. */
  const caseArb = fc
    .record({
      seen: fc.option(msArb),
      offline: fc.option(msArb),
      wait: fc.oneof(fc.integer({ min: 0, max: 60_000 }), fc.integer({ min: 0, max: 4 * HOUR })),
      more: fc.oneof(fc.integer({ min: 0, max: 60_000 }), fc.integer({ min: 0, max: 4 * HOUR })),
    })
    .map(({ seen, offline, wait, more }) => {
      const now = Math.max(seen ?? 0, offline ?? 0) + wait;
      const input: HealthInput = {
        last_seen_at: seen === null ? null : iso(seen),
        offline_at: offline === null ? null : iso(offline),
      };
      return { seen, offline, input, now, later: now + more };
    });

  it("health never improves as time passes with the same inputs, and dead_since stays put", () => {
    fc.assert(
      fc.property(caseArb, ({ input, now, later }) => {
        const a = deriveHealth(input, at(now));
        const b = deriveHealth(input, at(later));
        expect(b === null).toBe(a === null);
        if (!a || !b) return;
        expect(RANK[b.health]).toBeGreaterThanOrEqual(RANK[a.health]);
        if (a.dead_since !== null) expect(b.dead_since).toBe(a.dead_since);
      }),
    );
  });

  it("without an offline report, health follows the time since the last heartbeat", () => {
    fc.assert(
      fc.property(caseArb, ({ seen, now }) => {
        if (seen === null) return;
        const silent = now - seen;
        const expected: Health =
          silent < 15_000
            ? "HEALTHY"
            : silent < 30_000
              ? "UNHEALTHY"
              : silent < 30_000 + 2 * HOUR
                ? "DEAD"
                : "LONG_DEAD";
        expect(deriveHealth(seenAt(seen), at(now))).toEqual({
          health: expected,
          dead_since: silent >= 30_000 ? iso(seen + 30_000) : null,
        });
      }),
    );
  });

  it("dead_since is set exactly when the device is DEAD or LONG_DEAD", () => {
    fc.assert(
      fc.property(caseArb, ({ input, now }) => {
        const v = deriveHealth(input, at(now));
        if (v) expect(v.dead_since !== null).toBe(v.health === "DEAD" || v.health === "LONG_DEAD");
      }),
    );
  });

  it("isOnline and legacyHealth agree with the derived health", () => {
    fc.assert(
      fc.property(caseArb, ({ input, now }) => {
        const v = deriveHealth(input, at(now));
        expect(isOnline(v)).toBe(v?.health === "HEALTHY" || v?.health === "UNHEALTHY");
        expect(legacyHealth(v)).toBe(v === null ? null : v.health === "LONG_DEAD" ? "DEAD" : v.health);
      }),
    );
  });
});

describe("nextHealthChange", () => {
  const input = fc.record({
    last_seen_at: fc.option(fc.integer({ min: -3 * HOUR, max: 3 * HOUR }).map(iso)),
    offline_at: fc.option(fc.integer({ min: -3 * HOUR, max: 3 * HOUR }).map(iso)),
  });
  // Instants on and beside every threshold, where an off-by-one would show.
  const instant = fc.oneof(
    fc.integer({ min: -4 * HOUR, max: 4 * HOUR }),
    fc.constantFrom(0, UNHEALTHY_AFTER_MS, DEAD_AFTER_MS, DEAD_AFTER_MS + LONG_DEAD_AFTER_MS),
  );

  it("is later than now, and health holds until it (a view made now is true until then)", () => {
    fc.assert(
      fc.property(input, instant, fc.double({ min: 0, max: 1, noNaN: true }), (h, t, f) => {
        const next = nextHealthChange(h, at(t));
        expect(next).toBeGreaterThan(T0 + t);
        const end = Number.isFinite(next) ? next - T0 : t + 10 * HOUR;
        const later = t + Math.floor((end - t) * f);
        expect(deriveHealth(h, at(Math.min(later, end - 1)))).toEqual(deriveHealth(h, at(t)));
        expect(deriveHealth(h, at(end - 1))).toEqual(deriveHealth(h, at(t)));
      }),
    );
  });

  it("names the moments a heartbeat's device turns unhealthy, dead and long dead", () => {
    const h = seenAt(0);
    expect(nextHealthChange(h, at(0)) - T0).toBe(UNHEALTHY_AFTER_MS);
    expect(nextHealthChange(h, at(UNHEALTHY_AFTER_MS)) - T0).toBe(DEAD_AFTER_MS);
    expect(nextHealthChange(h, at(DEAD_AFTER_MS)) - T0).toBe(DEAD_AFTER_MS + LONG_DEAD_AFTER_MS);
    expect(nextHealthChange(h, at(DEAD_AFTER_MS + LONG_DEAD_AFTER_MS))).toBe(Number.POSITIVE_INFINITY);
    expect(nextHealthChange({ last_seen_at: null, offline_at: null }, at(0))).toBe(Number.POSITIVE_INFINITY);
  });
});
