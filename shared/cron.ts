import type { Clock, TimerHandle } from "./clock.ts";

/**
 * Cron schedules for the gateway's sweeps, in local time: five fields (minute hour day-of-month month
 * day-of-week) or six (seconds first). A field is `*`, a number, a range `a-b` (wrapping when a > b, as
 * `fri-mon`), any of these with a step (`*\/15`, `0-30/10`), or a list of them; `?` stands for `*` in the day
 * fields; months and weekdays may be named (`jan`, `january`, `sun`, `sunday`); weekday 7 is Sunday; a
 * day-of-month and a day-of-week both given must both match. `@yearly`, `@monthly`, `@weekly`, `@daily`,
 * `@midnight` and `@hourly` are accepted too. This is node-cron's syntax without its L, W and # forms.
 *
 * Our own rather than node-cron: node-cron reads the time of every tick through Intl.DateTimeFormat, and
 * ICU's date and time-zone data cost the daemon ~7 MB of resident memory (README: gateway footprint).
 */

export type CronSchedule = {
  /**
   * The first instant after `after` (to the second) that the schedule matches; null when none comes within
   * 50 years (a day of month and a weekday that rarely meet do so within 28).
   */
  next(after: Date): Date | null;
};

export class CronSyntaxError extends Error {}

const MONTHS = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"];
const WEEKDAYS = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"];
const FULL_MONTHS = [
  "january",
  "february",
  "march",
  "april",
  "may",
  "june",
  "july",
  "august",
  "september",
  "october",
  "november",
  "december",
];
const FULL_WEEKDAYS = ["sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"];

const NICKNAMES: Record<string, string> = {
  "@yearly": "0 0 1 1 *",
  "@annually": "0 0 1 1 *",
  "@monthly": "0 0 1 * *",
  "@weekly": "0 0 * * 0",
  "@daily": "0 0 * * *",
  "@midnight": "0 0 * * *",
  "@hourly": "0 * * * *",
};

type Field = { name: string; min: number; max: number; names?: (string[] | undefined)[]; offset?: number };
const FIELDS: Field[] = [
  { name: "second", min: 0, max: 59 },
  { name: "minute", min: 0, max: 59 },
  { name: "hour", min: 0, max: 23 },
  { name: "day of month", min: 1, max: 31 },
  { name: "month", min: 1, max: 12, names: [MONTHS, FULL_MONTHS], offset: 1 },
  // 7 is Sunday too: folded onto 0 once the field is read.
  { name: "day of week", min: 0, max: 7, names: [WEEKDAYS, FULL_WEEKDAYS], offset: 0 },
];

function value(text: string, f: Field, expr: string): number {
  const lower = text.toLowerCase();
  for (const list of f.names ?? []) {
    const i = list?.indexOf(lower) ?? -1;
    if (i >= 0) return i + (f.offset ?? 0);
  }
  if (!/^\d+$/.test(text)) throw new CronSyntaxError(`${expr}: ${f.name}: "${text}" is not a number`);
  const n = Number(text);
  if (n < f.min || n > f.max)
    throw new CronSyntaxError(`${expr}: ${f.name}: ${n} is outside ${f.min}-${f.max}`);
  return n;
}

function field(text: string, f: Field, expr: string): Set<number> {
  const out = new Set<number>();
  for (const part of text.split(",")) {
    const [range = "", stepText, extra] = part.split("/");
    if (extra !== undefined || range === "") throw new CronSyntaxError(`${expr}: ${f.name}: "${part}"`);
    const step = stepText === undefined ? 1 : Number(stepText);
    if (!Number.isInteger(step) || step < 1 || !/^\d+$/.test(stepText ?? "1"))
      throw new CronSyntaxError(`${expr}: ${f.name}: "${part}" has no whole step of 1 or more`);
    let first: number;
    let last: number;
    if (range === "*") [first, last] = [f.min, f.name === "day of week" ? 6 : f.max];
    else if (range.includes("-")) {
      const [a = "", b = "", more] = range.split("-");
      if (more !== undefined) throw new CronSyntaxError(`${expr}: ${f.name}: "${part}"`);
      [first, last] = [value(a, f, expr), value(b, f, expr)];
    } else {
      // A single value with a step (`5/15`) is no cron form node-cron knew either.
      if (stepText !== undefined)
        throw new CronSyntaxError(`${expr}: ${f.name}: "${part}": a step needs a range`);
      [first, last] = [value(range, f, expr), value(range, f, expr)];
    }
    if (first <= last) for (let v = first; v <= last; v += step) out.add(v);
    else {
      // A range that wraps (fri-mon, 22-2) runs on past the field's end and starts again at its beginning.
      const top = f.name === "day of week" ? 6 : f.max;
      const size = top - f.min + 1;
      const span = (((last - first) % size) + size) % size;
      for (let i = 0; i <= span; i += step) out.add(first + i > top ? first + i - size : first + i);
    }
  }
  return out;
}

/** Parses a cron expression; a CronSyntaxError names the field and the part it could not read. */
export function parseCron(expression: string): CronSchedule {
  const expr = expression.trim();
  const parts = (NICKNAMES[expr.toLowerCase()] ?? expr).split(/\s+/);
  if (parts.length === 5) parts.unshift("0");
  if (parts.length !== 6)
    throw new CronSyntaxError(`${expression}: expected 5 fields (or 6, seconds first), got ${parts.length}`);
  if (parts[3] === "?") parts[3] = "*";
  if (parts[5] === "?") parts[5] = "*";
  const [seconds, minutes, hours, days, months, weekdays] = parts.map((p, i) =>
    field(p, FIELDS[i] as Field, expression),
  ) as [Set<number>, Set<number>, Set<number>, Set<number>, Set<number>, Set<number>];
  if (weekdays.delete(7)) weekdays.add(0);
  const longest = Math.max(...[...months].map((m) => (m === 2 ? 29 : [4, 6, 9, 11].includes(m) ? 30 : 31)));
  if (Math.min(...days) > longest)
    throw new CronSyntaxError(`${expression}: no month it names has day ${Math.min(...days)}`);

  return {
    next(after) {
      const t = new Date(after.getTime());
      t.setMilliseconds(0);
      t.setSeconds(t.getSeconds() + 1);
      const until = after.getTime() + 50 * 366 * 86_400_000;
      while (t.getTime() <= until) {
        const before = t.getTime();
        if (!months.has(t.getMonth() + 1)) {
          t.setMonth(t.getMonth() + 1, 1);
          t.setHours(0, 0, 0, 0);
        } else if (!days.has(t.getDate()) || !weekdays.has(t.getDay())) {
          t.setDate(t.getDate() + 1);
          t.setHours(0, 0, 0, 0);
        } else if (!hours.has(t.getHours())) t.setHours(t.getHours() + 1, 0, 0, 0);
        else if (!minutes.has(t.getMinutes())) t.setMinutes(t.getMinutes() + 1, 0, 0);
        else if (!seconds.has(t.getSeconds())) t.setSeconds(t.getSeconds() + 1, 0);
        else return t;
        // Local-time arithmetic at a daylight-saving change may land on an earlier instant: move on by a second.
        if (t.getTime() <= before) t.setTime(before + 1000);
      }
      return null;
    },
  };
}

/** True when parseCron reads the expression. */
export function isCronExpression(expression: string): boolean {
  try {
    parseCron(expression);
    return true;
  } catch {
    return false;
  }
}

/** Node's timers take at most 2^31 - 1 ms; a longer wait is made of several. */
const MAX_WAIT_MS = 2_147_483_647;

/**
 * Runs `run` at each instant the schedule matches, on the injected clock. A round still running when the
 * next instant comes makes that instant pass without a round (no overlap). A round that throws or rejects
 * goes to `onError`; the schedule goes on.
 */
export function cronTask(
  clock: Clock,
  schedule: CronSchedule,
  run: () => unknown,
  onError: (err: unknown) => void,
): { start(): void; stop(): void } {
  let timer: TimerHandle | null = null;
  let running = false;
  let started = false;

  function arm(from: Date): void {
    const at = schedule.next(from);
    if (!at) return;
    const wait = at.getTime() - clock.now().getTime();
    timer = clock.setTimer(Math.min(Math.max(0, wait), MAX_WAIT_MS), () => {
      timer = null;
      if (!started) return;
      // Woken early (a long wait in parts, or the wall clock set back): wait on for the same instant.
      if (clock.now().getTime() < at.getTime()) {
        arm(new Date(at.getTime() - 1000));
        return;
      }
      if (!running) fire();
      arm(new Date(Math.max(at.getTime(), clock.now().getTime())));
    });
  }

  function fire(): void {
    running = true;
    let round: unknown;
    try {
      round = run();
    } catch (err) {
      onError(err);
    }
    if (round instanceof Promise)
      void round.catch(onError).finally(() => {
        running = false;
      });
    else running = false;
  }

  return {
    start() {
      if (started) return;
      started = true;
      arm(clock.now());
    },
    stop() {
      started = false;
      if (timer) clock.clearTimer(timer);
      timer = null;
    },
  };
}
