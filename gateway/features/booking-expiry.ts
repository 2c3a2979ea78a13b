import type { Logger } from "pino";
import type { BookingStore, Clock, TimerHandle } from "../ports.ts";

/**
 * Clears bookings whose end has passed on the gateway's clock. It wakes when the first stored booking
 * ends, and at least every `maxWaitMs` so a wall-clock step (NTP) is noticed too; `changed()` looks again
 * after a booking was recorded or ended. Readers never depend on it: a booking past its end is already
 * not `active`.
 */
export function createBookingExpiry(deps: {
  bookings: Pick<BookingStore, "clearExpired" | "nextEnd">;
  clock: Clock;
  log: Logger;
  maxWaitMs?: number;
}) {
  const maxWaitMs = deps.maxWaitMs ?? 60_000;
  let timer: TimerHandle | null = null;
  let running = false;

  function sweep(): number {
    const gone = deps.bookings.clearExpired(deps.clock.now());
    for (const b of gone)
      deps.log.info({ device_id: b.device_id, until: b.until, command_id: b.command_id }, "booking ended");
    return gone.length;
  }

  function schedule() {
    if (!running) return;
    if (timer) deps.clock.clearTimer(timer);
    const next = deps.bookings.nextEnd();
    const wait = next === null ? maxWaitMs : Date.parse(next) - deps.clock.now().getTime();
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
