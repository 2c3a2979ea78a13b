import { describe, expect, it } from "vitest";
import { FakeClock } from "../test/support/fake-clock.ts";
import { CronSyntaxError, cronTask, isCronExpression, parseCron } from "./cron.ts";

/** Local wall time, as the schedules read it. */
const local = (y: number, mo: number, d: number, h = 0, mi = 0, s = 0) => new Date(y, mo - 1, d, h, mi, s);

function runs(expr: string, from: Date, n: number): Date[] {
  const s = parseCron(expr);
  const out: Date[] = [];
  for (let t: Date | null = from; out.length < n; ) {
    t = s.next(t);
    if (!t) break;
    out.push(t);
  }
  return out;
}

describe("parseCron", () => {
  it("steps through minutes, hours and seconds", () => {
    expect(runs("*/15 * * * *", local(2026, 1, 15, 10, 7, 30), 3)).toEqual([
      local(2026, 1, 15, 10, 15),
      local(2026, 1, 15, 10, 30),
      local(2026, 1, 15, 10, 45),
    ]);
    expect(runs("*/20 * * * * *", local(2026, 1, 15, 10, 0, 0), 3)).toEqual([
      local(2026, 1, 15, 10, 0, 20),
      local(2026, 1, 15, 10, 0, 40),
      local(2026, 1, 15, 10, 1, 0),
    ]);
    // A match at the very instant given is not "after" it.
    expect(runs("0 * * * *", local(2026, 1, 15, 10, 0, 0), 1)).toEqual([local(2026, 1, 15, 11)]);
  });

  it("reads ranges, lists, steps on ranges and names, and wraps a range that runs past the end", () => {
    expect(runs("0 9 * * mon-fri", local(2026, 1, 16, 10), 2)).toEqual([
      local(2026, 1, 19, 9), // Friday 16th at 10:00 → Monday 19th
      local(2026, 1, 20, 9),
    ]);
    expect(runs("0 0 * * fri-mon", local(2026, 1, 15), 4).map((d) => d.getDay())).toEqual([5, 6, 0, 1]);
    expect(runs("0 22-2 * * *", local(2026, 1, 15, 3), 5).map((d) => d.getHours())).toEqual([
      22, 23, 0, 1, 2,
    ]);
    expect(runs("0-30/10 0 * * *", local(2026, 1, 15, 0, 1), 3).map((d) => d.getMinutes())).toEqual([
      10, 20, 30,
    ]);
    expect(runs("5,10 0 1 JAN,jul *", local(2026, 1, 15), 3)).toEqual([
      local(2026, 7, 1, 0, 5),
      local(2026, 7, 1, 0, 10),
      local(2027, 1, 1, 0, 5),
    ]);
    // 7 is Sunday as 0 is; ? stands for * in the day fields.
    expect(runs("0 0 ? * 7", local(2026, 1, 15), 1)).toEqual([local(2026, 1, 18)]);
  });

  it("needs both a day of month and a weekday to match when both are given, as node-cron did", () => {
    // The next Friday the 13th after mid-January 2026 is in February.
    expect(runs("0 0 13 * fri", local(2026, 1, 15), 2)).toEqual([local(2026, 2, 13), local(2026, 3, 13)]);
    expect(runs("0 0 29 2 *", local(2026, 1, 15), 1)).toEqual([local(2028, 2, 29)]);
  });

  it("accepts the nicknames", () => {
    expect(runs("@hourly", local(2026, 1, 15, 10, 30), 1)).toEqual([local(2026, 1, 15, 11)]);
    expect(runs("@daily", local(2026, 1, 15, 10, 30), 1)).toEqual([local(2026, 1, 16)]);
    expect(runs("@weekly", local(2026, 1, 15, 10, 30), 1)).toEqual([local(2026, 1, 18)]);
  });

  it.each([
    ["* * * *", /5 fields/],
    ["61 * * * *", /minute: 61 is outside 0-59/],
    ["* 24 * * *", /hour: 24/],
    ["a * * * *", /"a" is not a number/],
    ["*/0 * * * *", /step/],
    ["5/15 * * * *", /a step needs a range/],
    ["1-2-3 * * * *", /minute/],
    ["0 0 30 2 *", /no month it names has day 30/],
    ["0 0 L * *", /day of month/],
    ["0 0 * * 1#2", /day of week/],
  ])("refuses %s, naming what it could not read", (expr, message) => {
    expect(() => parseCron(expr)).toThrow(CronSyntaxError);
    expect(() => parseCron(expr)).toThrow(message);
    expect(isCronExpression(expr)).toBe(false);
  });
});

describe("cronTask", () => {
  it("runs at each matching instant on the injected clock and stops", () => {
    const clock = new FakeClock(local(2026, 1, 15, 10, 7));
    const at: Date[] = [];
    const task = cronTask(
      clock,
      parseCron("*/15 * * * *"),
      () => at.push(clock.now()),
      () => {},
    );
    task.start();
    task.start(); // a second start arms nothing more
    clock.advance(40 * 60_000);
    expect(at).toEqual([local(2026, 1, 15, 10, 15), local(2026, 1, 15, 10, 30), local(2026, 1, 15, 10, 45)]);
    task.stop();
    clock.advance(60 * 60_000);
    expect(at).toHaveLength(3);
    expect(clock.pendingTimers()).toBe(0);
  });

  it("lets an instant pass while the round before is still running, and hands errors on", async () => {
    const clock = new FakeClock(local(2026, 1, 15, 10, 0));
    const errors: unknown[] = [];
    let started = 0;
    const round: { finish?: () => void } = {};
    const task = cronTask(
      clock,
      parseCron("* * * * *"),
      () => {
        started++;
        if (started === 3) throw new Error("round 3");
        return new Promise<void>((resolve) => {
          round.finish = resolve;
        });
      },
      (e) => errors.push(e),
    );
    task.start();
    clock.advance(60_000);
    expect(started).toBe(1);
    clock.advance(60_000); // round 1 still running: this minute passes
    expect(started).toBe(1);
    round.finish?.();
    await Promise.resolve();
    await Promise.resolve();
    clock.advance(60_000);
    expect(started).toBe(2);
    round.finish?.();
    await Promise.resolve();
    await Promise.resolve();
    clock.advance(60_000);
    expect(started).toBe(3);
    expect(errors).toEqual([new Error("round 3")]);
    clock.advance(60_000);
    expect(started).toBe(4);
    task.stop();
  });

  it("waits in parts for an instant further off than a timer can wait", () => {
    const clock = new FakeClock(local(2026, 1, 15));
    const at: Date[] = [];
    const task = cronTask(
      clock,
      parseCron("0 0 1 6 *"),
      () => at.push(clock.now()),
      () => {},
    );
    task.start();
    clock.advance(100 * 86_400_000);
    expect(at).toEqual([]);
    clock.advance(100 * 86_400_000);
    expect(at).toEqual([local(2026, 6, 1)]);
    task.stop();
  });
});
