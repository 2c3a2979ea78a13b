/**
 * Health-gated systemd watchdog (docs/cases.md U21, F16): every `intervalMs` (WatchdogSec/2, see
 * watchdogIntervalMs) it asks isHealthy() and sends WATCHDOG=1 only when the answer is true. A daemon whose
 * event loop is stuck (or SIGSTOPped) never runs the timer; one whose checks fail or hang stops pinging.
 * Either way systemd's deadline passes and it kills and restarts the service (Restart=on-failure).
 */
import type { Clock, TimerHandle } from "../../shared/time/clock.ts";

export type WatchdogLog = { warn(obj: object, msg?: string): void; info(obj: object, msg?: string): void };

export type WatchdogOptions = {
  /** Sends one sd_notify message; called with "WATCHDOG=1". */
  notify: (message: "WATCHDOG=1") => unknown;
  intervalMs: number;
  isHealthy: () => boolean | Promise<boolean>;
  clock: Pick<Clock, "setTimer" | "clearTimer">;
  log?: WatchdogLog;
};

export interface Watchdog {
  start(): void;
  stop(): void;
  /** One check now, pinging when healthy and started; resolves to whether it pinged. */
  tick(): Promise<boolean>;
  readonly running: boolean;
}

export function createWatchdog(opts: WatchdogOptions): Watchdog {
  if (!(opts.intervalMs > 0)) throw new Error(`watchdog intervalMs must be > 0, got ${opts.intervalMs}`);
  let timer: TimerHandle | null = null;
  let checking = false;
  let healthy = true;

  const tick = async (): Promise<boolean> => {
    // A check still pending from the last round is not answered again: a hung check means no pings.
    if (checking) return false;
    checking = true;
    let ok: boolean;
    try {
      ok = (await opts.isHealthy()) === true;
    } catch (err) {
      ok = false;
      opts.log?.warn({ err }, "watchdog health check threw");
    } finally {
      checking = false;
    }
    if (ok !== healthy) {
      healthy = ok;
      if (ok) opts.log?.info({}, "healthy again: watchdog pings resumed");
      else
        opts.log?.warn(
          {},
          "unhealthy: watchdog pings withheld, systemd will restart the daemon if this lasts",
        );
    }
    if (!ok || timer === null) return false;
    try {
      await opts.notify("WATCHDOG=1");
    } catch (err) {
      opts.log?.warn({ err }, "watchdog ping failed");
      return false;
    }
    return true;
  };

  const schedule = () => {
    timer = opts.clock.setTimer(opts.intervalMs, () => {
      if (timer === null) return;
      schedule();
      void tick();
    });
  };

  return {
    start() {
      if (timer !== null) return;
      schedule();
    },
    stop() {
      if (timer !== null) opts.clock.clearTimer(timer);
      timer = null;
    },
    tick,
    get running() {
      return timer !== null;
    },
  };
}
