import { describe, expect, it } from "vitest";
import { FakeClock } from "../../test/support/fake-clock.ts";
import { every } from "./every.ts";

describe("every", () => {
  it("runs a synchronous round each period, goes on after one that throws, and stops", () => {
    const clock = new FakeClock();
    const errors: unknown[] = [];
    let n = 0;
    const r = every(
      clock,
      1_000,
      () => {
        n++;
        if (n === 2) throw new Error("round 2");
      },
      (e) => errors.push(e),
    );
    r.start();
    r.start(); // a second start arms nothing more
    clock.advance(3_000);
    expect(n).toBe(3);
    expect(errors).toHaveLength(1);
    r.stop();
    clock.advance(5_000);
    expect(n).toBe(3);
  });

  it("arms the next round of an asynchronous run only once it has settled, rejected or not", async () => {
    const clock = new FakeClock();
    const errors: unknown[] = [];
    let started = 0;
    const round: { finish?: () => void } = {};
    const r = every(
      clock,
      1_000,
      () => {
        started++;
        return new Promise<void>((resolve, reject) => {
          round.finish = started === 1 ? () => reject(new Error("round 1")) : resolve;
        });
      },
      (e) => errors.push(e),
    );
    r.start();
    clock.advance(1_000);
    clock.advance(5_000); // round 1 still running: no overlap
    expect(started).toBe(1);
    round.finish?.();
    await new Promise((resolve) => setImmediate(resolve));
    expect(errors).toHaveLength(1);
    clock.advance(1_000);
    expect(started).toBe(2);
    r.stop();
  });
});
