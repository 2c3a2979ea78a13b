import { describe, expect, it } from "vitest";
import { Backoff } from "./backoff.ts";

describe("Backoff", () => {
  it("doubles each wait up to the cap and starts over after a reset", () => {
    const b = new Backoff({ minMs: 500, maxMs: 4_000 });
    expect([b.next(), b.next(), b.next(), b.next(), b.next(), b.next()]).toEqual([
      500, 1_000, 2_000, 4_000, 4_000, 4_000,
    ]);
    b.reset();
    expect(b.next()).toBe(500);
  });

  it("with jitter draws each wait up to the current bound", () => {
    const draws = [0, 0.5, 1, 0.25];
    const b = new Backoff({ minMs: 1_000, maxMs: 4_000, jitter: () => draws.shift() ?? 1 });
    expect(b.upcoming).toBe(1_000);
    expect([b.next(), b.next(), b.next(), b.next()]).toEqual([0, 1_000, 4_000, 1_000]);
  });

  it("refuses bounds that cannot back off", () => {
    expect(() => new Backoff({ minMs: 0, maxMs: 10 })).toThrow(RangeError);
    expect(() => new Backoff({ minMs: 10, maxMs: 5 })).toThrow(RangeError);
  });
});
