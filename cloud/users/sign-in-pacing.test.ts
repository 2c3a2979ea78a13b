import { describe, expect, it } from "vitest";
import { FakeClock } from "../../test/support/fake-clock.ts";
import { createSignInPacing } from "./sign-in-pacing.ts";

/** How long `wait` takes on the clock, advancing it a millisecond at a time. */
async function waited(clock: FakeClock, wait: Promise<void>, limit = 10_000): Promise<number> {
  let done = false;
  void wait.then(() => {
    done = true;
  });
  for (let ms = 0; ms <= limit; ms++) {
    await Promise.resolve();
    if (done) return ms;
    clock.advance(1);
  }
  throw new Error("never resolved");
}

describe("sign-in pacing", () => {
  it("does not wait before the operator's first verification", async () => {
    const clock = new FakeClock();
    const pacing = createSignInPacing({ clock, maxMs: 5_000 });
    expect(await waited(clock, pacing.wait("op"))).toBe(0);
  });

  it("waits one of the operator's recent verification times, each operator its own", async () => {
    const clock = new FakeClock();
    const pacing = createSignInPacing({ clock, maxMs: 5_000 });
    pacing.record("op", 40);
    pacing.record("op", 70);
    pacing.record("other", 900);
    const seen = new Set<number>();
    for (let i = 0; i < 40; i++) seen.add(await waited(clock, pacing.wait("op")));
    expect([...seen].sort((a, b) => a - b)).toEqual([40, 70]);
  });

  it("keeps the newest 16 times, and never waits past the callback limit", async () => {
    const clock = new FakeClock();
    const pacing = createSignInPacing({ clock, maxMs: 100 });
    pacing.record("op", 10);
    for (let i = 0; i < 16; i++) pacing.record("op", 250);
    for (let i = 0; i < 10; i++) expect(await waited(clock, pacing.wait("op"))).toBe(100);
  });
});
