import type { Logger } from "pino";
import type { BookingStore, Clock, TimerHandle } from "../ports.ts";
import type { CloudClock } from "../time/cloud-clock.ts";

/**
 * Clears bookings whose end (the cloud's time) has passed on the cloud's clock as the gateway knows it, on
 * its wall clock only before it has heard the cloud (docs/decisions/clock.md). It wakes when the first
 * stored booking ends, and at least every `maxWaitMs` so a wall-clock step (NTP) is noticed too; `changed()` looks again
 * after a booking was recorded or ended. Readers never depend on it: a booking past its end is already
 * not `active`.
 */
export function createBookingExpiry(deps: {
  bookings: Pick<BookingStore, "clearExpired" | "nextEnd">;
  clock: Clock;
  cloudTime?: Pick<CloudClock, "cloudNow">;
  log: Logger;
  maxWaitMs?: number;
}) {
  const now = () => deps.cloudTime?.cloudNow() ?? deps.clock.now();
  const maxWaitMs = deps.maxWaitMs ?? 60_000;
  let timer: TimerHandle | null = null;
  let running = false;

  function sweep(): number {
    const gone = deps.bookings.clearExpired(now());
    for (const b of gone)
      deps.log.info({ device_id: b.device_id, until: b.until, command_id: b.command_id }, "booking ended");
    return gone.length;
  }

  function schedule() {
    if (!running) return;
    if (timer) deps.clock.clearTimer(timer);
    const next = deps.bookings.nextEnd();
    const wait = next === null ? maxWaitMs : Date.parse(next) - now().getTime();
    timer = deps.clock.setTimer(Math.min(maxWaitMs, Math.max(0, wait)), () => {
      timer = null;
      try {
        sweep();
      } catch (err) {
        deps.log.error({ err }, "clearing ended bookings failed");
      }
      schedule();
    });
  }

  return {
    sweep,
    start() {
      running = true;
      sweep();
      schedule();
    },
    /** A booking was recorded or ended: wake at the (new) first end. */
    changed() {
      schedule();
    },
    stop() {
      running = false;
      if (timer) deps.clock.clearTimer(timer);
      timer = null;
    },
  };
}

export type BookingExpiry = ReturnType<typeof createBookingExpiry>;
