import { describe, expect, it } from "vitest";
import { FakeClock } from "../../test/support/fake-clock.ts";
import { createFailureLimiter, type FailurePolicy } from "./failure-limiter.ts";

const SLIDING: FailurePolicy = { max: 3, windowMs: 60_000 };
const BACKOFF: FailurePolicy = {
  max: 3,
  windowMs: 60_000,
  backoff: { baseMs: 1_000, maxMs: 8_000, forgetMs: 3_600_000 },
};

function failTimes(limiter: { fail(key: string): void }, key: string, n: number) {
  for (let i = 0; i < n; i++) limiter.fail(key);
}

describe("failure limiter, sliding window", () => {
  it("blocks a key at the ceiling until its oldest failure leaves the window", () => {
    const clock = new FakeClock();
    const limiter = createFailureLimiter({ clock, policy: SLIDING });
    limiter.fail("a");
    clock.advance(10_000);
    failTimes(limiter, "a", 1);
    expect(limiter.retryAfterS("a")).toBe(0);
    limiter.fail("a");
    expect(limiter.retryAfterS("a")).toBe(50);
    expect(limiter.retryAfterS("b")).toBe(0);
    clock.advance(50_000);
    expect(limiter.retryAfterS("a")).toBe(0);
  });

  it("forgets a key once its failures have left the window", () => {
    const clock = new FakeClock();
    const limiter = createFailureLimiter({ clock, policy: SLIDING });
    failTimes(limiter, "a", 2);
    clock.advance(60_000);
    expect(limiter.retryAfterS("a")).toBe(0);
    expect(limiter.size()).toBe(0);
    failTimes(limiter, "a", 2);
    expect(limiter.retryAfterS("a")).toBe(0);
  });
});

describe("failure limiter, exponential backoff", () => {
  it("blocks at the ceiling for the base time, then doubles with each further failure up to the cap", () => {
    const clock = new FakeClock();
    const limiter = createFailureLimiter({ clock, policy: BACKOFF });
    failTimes(limiter, "c", 2);
    expect(limiter.retryAfterS("c")).toBe(0);
    limiter.fail("c");
    const waits = [limiter.retryAfterS("c")];
    for (let i = 0; i < 5; i++) {
      clock.advance((waits.at(-1) ?? 0) * 1000);
      expect(limiter.retryAfterS("c")).toBe(0);
      limiter.fail("c");
      waits.push(limiter.retryAfterS("c"));
    }
    expect(waits).toEqual([1, 2, 4, 8, 8, 8]);
  });

  it("keeps doubling after the counted failures have left the window, and forgets after the quiet time", () => {
    const clock = new FakeClock();
    const limiter = createFailureLimiter({ clock, policy: BACKOFF });
    failTimes(limiter, "c", 3);
    clock.advance(120_000);
    limiter.fail("c");
    expect(limiter.retryAfterS("c")).toBe(2);

    clock.advance(3_600_000);
    expect(limiter.retryAfterS("c")).toBe(0);
    expect(limiter.size()).toBe(0);
    failTimes(limiter, "c", 2);
    expect(limiter.retryAfterS("c")).toBe(0);
  });
});

describe("failure limiter memory", () => {
  it("stays bounded under a flood of new keys and keeps recent offenders blocked", () => {
    const clock = new FakeClock();
    const limiter = createFailureLimiter({ clock, policy: SLIDING, capacity: 100, offenderCapacity: 10 });
    failTimes(limiter, "offender", 3);
    failTimes(limiter, "suspect", 2);
    clock.advance(1_000);

    for (let i = 0; i < 10_000; i++) limiter.fail(`new-${i}`);

    expect(limiter.size()).toBeLessThanOrEqual(110);
    expect(limiter.retryAfterS("offender")).toBe(59);
    // The suspect was the least recently used of the keys under the ceiling: it made room.
    limiter.fail("suspect");
    expect(limiter.retryAfterS("suspect")).toBe(0);
    // The newest keys are still counted.
    failTimes(limiter, "new-9999", 2);
    expect(limiter.retryAfterS("new-9999")).toBe(60);
  });

  it("evicts the least recently used offender when offenders exceed their room", () => {
    const clock = new FakeClock();
    const limiter = createFailureLimiter({ clock, policy: SLIDING, capacity: 100, offenderCapacity: 2 });
    failTimes(limiter, "o1", 3);
    failTimes(limiter, "o2", 3);
    expect(limiter.retryAfterS("o1")).toBe(60); // o1 is now the most recently used
    failTimes(limiter, "o3", 3);
    expect(limiter.retryAfterS("o1")).toBe(60);
    expect(limiter.retryAfterS("o3")).toBe(60);
    expect(limiter.retryAfterS("o2")).toBe(0);
    expect(limiter.size()).toBe(2);
  });
});
