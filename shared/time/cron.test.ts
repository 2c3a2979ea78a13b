import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FakeClock } from "../../test/support/fake-clock.ts";
import { CronSyntaxError, cronTask, parseCron } from "./cron.ts";

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

  it("reads ranges, lists, steps on ranges, names, ? and weekday 7", () => {
    expect(runs("0 9 * * mon-fri", local(2026, 1, 16, 10), 2)).toEqual([
      local(2026, 1, 19, 9), // Friday 16th at 10:00 → Monday 19th
      local(2026, 1, 20, 9),
    ]);
    expect(runs("0-30/10 0 * * *", local(2026, 1, 15, 0, 1), 3).map((d) => d.getMinutes())).toEqual([
      10, 20, 30,
    ]);
    expect(runs("5,10 0 1 JAN,jul *", local(2026, 1, 15), 3)).toEqual([
      local(2026, 7, 1, 0, 5),
      local(2026, 7, 1, 0, 10),
      local(2027, 1, 1, 0, 5),
    ]);
    // 7 is Sunday as 0 is; ? stands for *.
    expect(runs("0 0 ? * 7", local(2026, 1, 15), 1)).toEqual([local(2026, 1, 18)]);
    // mon-sun runs to 7: every day.
    expect(runs("0 0 * * mon-sun", local(2026, 1, 15), 3).map((d) => d.getDay())).toEqual([5, 6, 0]);
  });

  it("takes croner's last day (L), nearest weekday (W) and nth weekday (#)", () => {
    expect(runs("0 0 L * *", local(2026, 1, 15), 2)).toEqual([local(2026, 1, 31), local(2026, 2, 28)]);
    // The 15th of February 2026 is a Sunday: the weekday nearest it is Monday the 16th.
    expect(runs("0 0 15W * *", local(2026, 2, 1), 1)).toEqual([local(2026, 2, 16)]);
    expect(runs("0 0 * * mon#2", local(2026, 1, 15), 2)).toEqual([local(2026, 2, 9), local(2026, 3, 9)]);
    expect(runs("0 0 * * 5#L", local(2026, 1, 15), 1)).toEqual([local(2026, 1, 30)]);
  });

  it("needs both a day of month and a weekday to match when both are given (not Vixie cron's either)", () => {
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
    ["* * * *", /five, six, or seven/],
    ["* * * * * * *", /5 or 6 parts/], // no year field
    ["61 * * * *", /minute: 61/],
    ["* 24 * * *", /hour: 24/],
    ["a * * * *", /\(a\) contains illegal characters/],
    ["*/0 * * * *", /illegal stepping: 0/],
    ["5/15 * * * *", /stepping with numeric prefix \('5\/15'\) is not allowed/],
    ["1-2-3 * * * *", /illegal range: '1-2-3'/],
    // A range runs upwards: 22-23,0-2 for the hours around midnight.
    ["0 22-2 * * *", /From value is larger than to value: '22-2'/],
    ["0 0 * * fri-mon", /From value is larger than to value/],
    // Names have three letters.
    ["0 0 1 january *", /a month or day name has to stand alone \('january'\)/],
    ["@reboot", /@reboot is not supported/],
    ["0 0 30 2 *", /matches no date/],
    ["0 0 31 4,6,9,11 *", /matches no date/],
  ])("refuses %s, saying why", (expr, message) => {
    expect(() => parseCron(expr)).toThrow(CronSyntaxError);
    expect(() => parseCron(expr)).toThrow(`${expr}: `);
    expect(() => parseCron(expr)).toThrow(message);
  });
});

describe("parseCron at a daylight-saving change (Europe/Berlin)", () => {
  const tz = process.env.TZ;
  beforeAll(() => {
    process.env.TZ = "Europe/Berlin";
  });
  afterAll(() => {
    if (tz === undefined) delete process.env.TZ;
    else process.env.TZ = tz;
  });

  it("runs a time of day the spring change skips just after the gap, and a repeated one once", () => {
    expect(local(2026, 1, 15).getTimezoneOffset()).toBe(-60);
    // 29 March 2026: 02:00 CET → 03:00 CEST.
    expect(runs("30 2 * * *", local(2026, 3, 28, 12), 2).map((d) => d.toISOString())).toEqual([
      "2026-03-29T01:00:00.000Z", // 03:00 CEST
      "2026-03-30T00:30:00.000Z", // 02:30 CEST
    ]);
    // 25 October 2026: 03:00 CEST → 02:00 CET; 02:30 comes twice.
    expect(runs("30 2 * * *", local(2026, 10, 24, 12), 2).map((d) => d.toISOString())).toEqual([
      "2026-10-25T00:30:00.000Z", // 02:30 CEST
      "2026-10-26T01:30:00.000Z", // 02:30 CET, the next day
    ]);
  });

  it("runs an interval through the repeated hour, in real time", () => {
    expect(runs("*/30 * * * *", local(2026, 10, 25, 1, 0), 6).map((d) => d.toISOString())).toEqual([
      "2026-10-24T23:30:00.000Z", // 01:30 CEST
      "2026-10-25T00:00:00.000Z", // 02:00 CEST
      "2026-10-25T00:30:00.000Z", // 02:30 CEST
      "2026-10-25T01:00:00.000Z", // 02:00 CET
      "2026-10-25T01:30:00.000Z", // 02:30 CET
      "2026-10-25T02:00:00.000Z", // 03:00 CET
    ]);
  });

  it("and so does cronTask on the injected clock", () => {
    const clock = new FakeClock("2026-10-24T23:10:00.000Z");
    const at: string[] = [];
    const task = cronTask(
      clock,
      parseCron("*/30 * * * *"),
      () => at.push(clock.now().toISOString()),
      () => {},
    );
    task.start();
    clock.advance(3 * 3_600_000);
    task.stop();
    expect(at).toEqual([
      "2026-10-24T23:30:00.000Z",
      "2026-10-25T00:00:00.000Z",
      "2026-10-25T00:30:00.000Z",
      "2026-10-25T01:00:00.000Z",
      "2026-10-25T01:30:00.000Z",
      "2026-10-25T02:00:00.000Z",
    ]);
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
