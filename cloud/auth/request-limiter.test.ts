import { describe, expect, it } from "vitest";
import { FakeClock } from "../../test/support/fake-clock.ts";
import { createRequestLimiter } from "./request-limiter.ts";

describe("request limiter (token bucket)", () => {
  it("allows the burst at once, then one request per minute/perMinute", () => {
    const clock = new FakeClock();
    const limiter = createRequestLimiter({ clock, policy: { burst: 3, perMinute: 6 } });
    for (let i = 0; i < 3; i++) {
      expect(limiter.waitS("a")).toBe(0);
      limiter.take("a");
    }
    expect(limiter.waitS("a")).toBe(10);
    expect(limiter.waitS("b")).toBe(0);
    clock.advance(9_000);
    expect(limiter.waitS("a")).toBe(1);
    clock.advance(1_000);
    expect(limiter.waitS("a")).toBe(0);
    limiter.take("a");
    expect(limiter.waitS("a")).toBe(10);
  });

  it("refills to the burst and no further after a quiet time", () => {
    const clock = new FakeClock();
    const limiter = createRequestLimiter({ clock, policy: { burst: 2, perMinute: 60 } });
    limiter.take("a");
    limiter.take("a");
    clock.advance(3_600_000);
    limiter.take("a");
    limiter.take("a");
    expect(limiter.waitS("a")).toBe(1);
  });

  it("asking does not count; only take does", () => {
    const clock = new FakeClock();
    const limiter = createRequestLimiter({ clock, policy: { burst: 1, perMinute: 1 } });
    for (let i = 0; i < 5; i++) expect(limiter.waitS("a")).toBe(0);
    limiter.take("a");
    expect(limiter.waitS("a")).toBe(60);
  });

  it("holds at most `capacity` keys", () => {
    const clock = new FakeClock();
    const limiter = createRequestLimiter({ clock, policy: { burst: 1, perMinute: 1 }, capacity: 100 });
    for (let i = 0; i < 10_000; i++) limiter.take(`k${i}`);
    expect(limiter.size()).toBe(100);
    expect(limiter.waitS("k9999")).toBe(60);
  });
});
