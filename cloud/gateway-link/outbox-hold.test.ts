import { describe, expect, it } from "vitest";
import { FakeClock } from "../../test/support/fake-clock.ts";
import { createOutboxHold, HOLD_MAX_MS } from "./outbox-hold.ts";

const full = Object.assign(new Error("database or disk is full"), { code: "SQLITE_FULL" });

describe("outbox hold", () => {
  it("holds a gateway's later messages while one the full store refused waits to be applied again", () => {
    const hold = createOutboxHold(new FakeClock());
    hold.failed("gw-1", "o1", 7, full);
    expect([6, 7, 8, 20].map((seq) => hold.waits("gw-1", "o1", seq))).toEqual([false, false, true, true]);
    // Another gateway, another outbox of this one: not held.
    expect(hold.waits("gw-2", "o1", 8)).toBe(false);
    expect(hold.waits("gw-1", "o2", 8)).toBe(false);
    // An earlier one refused too holds from there; a later refusal changes nothing.
    hold.failed("gw-1", "o1", 5, full);
    hold.failed("gw-1", "o1", 9, full);
    expect(hold.waits("gw-1", "o1", 6)).toBe(true);
    hold.applied("gw-1", "o1", 6);
    expect(hold.waits("gw-1", "o1", 6)).toBe(true);
    hold.applied("gw-1", "o1", 5);
    expect(hold.waits("gw-1", "o1", 8)).toBe(false);
  });

  it("holds nothing for any other failure, and nothing for longer than HOLD_MAX_MS", () => {
    const clock = new FakeClock();
    const hold = createOutboxHold(clock);
    hold.failed("gw-1", "o1", 7, new Error("a bug"));
    expect(hold.waits("gw-1", "o1", 8)).toBe(false);
    hold.failed("gw-1", "o1", 7, Object.assign(new Error("disk full"), { code: "53100" }));
    clock.advance(HOLD_MAX_MS);
    expect(hold.waits("gw-1", "o1", 8)).toBe(true);
    clock.advance(1);
    expect(hold.waits("gw-1", "o1", 8)).toBe(false);
  });
});
