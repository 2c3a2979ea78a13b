import { Cron } from "croner";
import type { Clock, TimerHandle } from "./clock.ts";

/**
 * Cron schedules for the gateway's sweeps, in local time, read and computed by croner: five fields (minute
 * hour day-of-month month day-of-week) or six (seconds first). A field is `*` or `?`, a number, a range
 * `a-b`, a step on `*` or on a range (`*\/15`, `0-30/10`), or a list of them; months and weekdays may be
 * named by three letters (`jan`, `mon`); weekday 7 is Sunday; the day fields take croner's `L` (last), `W`
 * (nearest weekday) and `#` (nth weekday); `@yearly`, `@monthly`, `@weekly`, `@daily` and `@hourly` are
 * accepted too. A day of month and a weekday both given must both match. At a daylight-saving change
 * croner does as Vixie cron: a schedule at one time of day (`30 2 * * *`) still runs once that day, at the
 * first of a repeated time and just after the gap for a time the change skips; one with a wildcard, step,
 * range or list in its time fields runs through the repeated hour and skips the missing one.
 *
 * croner rather than node-cron: given no time zone it reads a Date's local fields, never Intl, whereas
 * node-cron formats every tick through Intl.DateTimeFormat and ICU's data cost the daemon ~7 MB resident
 * (docs/benchmarks.md, gateway footprint; docs/decisions/gateway-memory.md). So no `timezone` option here.
 */

export type CronSchedule = {
  /** The first instant after `after` (to the second) that the schedule matches; null when none comes. */
  next(after: Date): Date | null;
};

export class CronSyntaxError extends Error {}

const OPTIONS = {
  paused: true,
  // Both day fields given must both match (croner's default is Vixie cron's either-or): as node-cron read
  // them, and our own parser after it, so a config keeps its meaning.
  domAndDow: true,
  // No seventh (year) field.
  mode: "5-or-6-parts",
} as const;

/**
 * A schedule without a year repeats every 400 years, and croner searches up to the year 9999: one that
 * matches nothing from here on matches nothing at all.
 */
const SINCE = new Date(2000, 0, 1);

/** Parses a cron expression; a CronSyntaxError gives the expression and croner's reason. */
export function parseCron(expression: string): CronSchedule {
  let cron: Cron;
  try {
    cron = new Cron(expression, OPTIONS);
  } catch (err) {
    const why = err instanceof Error ? err.message.replace(/^CronPattern: /, "") : String(err);
    throw new CronSyntaxError(`${expression}: ${why}`);
  }
  // Accepted by croner but never due (`0 0 30 2 *`): a sweep that would never run is a mistake in the config.
  if (!cron.nextRun(SINCE)) throw new CronSyntaxError(`${expression}: matches no date`);
  return { next: (after) => cron.nextRun(after) };
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
