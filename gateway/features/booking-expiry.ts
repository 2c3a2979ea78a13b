import type { Logger } from "pino";
import type { BookingStore, Clock, TimerHandle } from "../ports.ts";
import type { CloudClock } from "../time/cloud-clock.ts";

/**
 * Clears bookings whose end (the cloud's time) has passed on the cloud's clock as the gateway knows it, on
 * its wall clock only before it has heard the cloud (docs/decisions/clock.md). It wakes when the first
 * stored booking ends, and at least every `maxWaitMs` so a wall-clock step (NTP) is noticed too; `changed()` looks again
 * after a booking was recorded or ended. Readers never depend on it: a booking past its end is already
 * not `active`. A sweep the store refuses (a full disk) is tried again after `retryMs`, never in a loop, and
 * does not stop the daemon's start.
 */
export function createBookingExpiry(deps: {
  bookings: Pick<BookingStore, "clearExpired" | "nextEnd">;
  clock: Clock;
  cloudTime?: Pick<CloudClock, "cloudNow">;
  log: Logger;
  maxWaitMs?: number;
  retryMs?: number;
}) {
  const now = () => deps.cloudTime?.cloudNow() ?? deps.clock.now();
  const maxWaitMs = deps.maxWaitMs ?? 60_000;
  const retryMs = deps.retryMs ?? 5_000;
  let timer: TimerHandle | null = null;
  let running = false;

  function sweep(): number {
    const gone = deps.bookings.clearExpired(now());
    for (const b of gone)
      deps.log.info({ device_id: b.device_id, until: b.until, command_id: b.command_id }, "booking ended");
    return gone.length;
  }

  /** Sweeps; false when the store refused (its ended bookings stay, already not active). */
  function trySweep(): boolean {
    try {
      sweep();
      return true;
    } catch (err) {
      deps.log.error({ err }, "clearing ended bookings failed; trying again later");
      return false;
    }
  }

  /** Wakes at the first end (or after `afterMs`: a failed sweep's pause), at most `maxWaitMs` from now. */
  function schedule(afterMs?: number) {
    if (!running) return;
    if (timer) deps.clock.clearTimer(timer);
    const next = deps.bookings.nextEnd();
    const wait = afterMs ?? (next === null ? maxWaitMs : Date.parse(next) - now().getTime());
    timer = deps.clock.setTimer(Math.min(maxWaitMs, Math.max(0, wait)), () => {
      timer = null;
      schedule(trySweep() ? undefined : retryMs);
    });
  }

  return {
    sweep,
    start() {
      running = true;
      schedule(trySweep() ? undefined : retryMs);
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
