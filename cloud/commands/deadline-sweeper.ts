import type { Logger } from "pino";
import type { Clock, TimerHandle } from "../../shared/time/clock.ts";
import { advanceDevice } from "../devices/advance-device.ts";
import { deviceRepository } from "../devices/device-repository.ts";
import type { CommandTimeoutConfig } from "../devices/timeouts.ts";
import type { CommandSettledNotifier } from "../ports.ts";
import { raiseTimedOut } from "../site-events/timed-out.ts";
import type { Db } from "../store/db.ts";
import { commandRepository } from "./command-repository.ts";
import { endCommand } from "./end-command.ts";

/** At most this many commands, and this many devices, per sweep; the next sweep takes the rest. */
const BATCH = 500;

/**
 * Enforces every deadline in the cloud itself (flow 1): commands past their state's timeout end in
 * ERROR and return their device; bookings and door releases expire. Safe across replicas because each
 * write is a compare-and-set.
 */
export function createDeadlineSweeper(deps: {
  db: Db;
  clock: Clock;
  timeouts: CommandTimeoutConfig;
  log: Logger;
  everyMs?: number;
  /** Told of each command a sweep ends, so a request waiting on it here answers at once. */
  settled?: CommandSettledNotifier;
}) {
  const { db, clock, timeouts, log } = deps;
  const everyMs = deps.everyMs ?? 1_000;
  let timer: TimerHandle | null = null;
  let running = false;

  async function sweep(): Promise<number> {
    const now = clock.now();
    const ts = now.toISOString();
    let moved = 0;
    const due = await commandRepository(db).pastDeadline(ts, BATCH);
    for (const c of due) {
      const ended = await endCommand(
        db,
        {
          commandId: c.id,
          input: { kind: "deadline" },
          now,
          cfg: timeouts,
          events: (s) => [{ name: "REQUEST_TIMED_OUT", value: s.reason, timestamp: ts }],
        },
        (trx, ended) => raiseTimedOut(trx, ended, now),
      );
      if (!ended) continue;
      moved++;
      deps.settled?.notify(c.id);
    }
    for (const deviceId of await deviceRepository(db).idsPastDeadline(ts, BATCH)) {
      const res = await advanceDevice(db, {
        deviceId,
        commandId: null,
        input: { kind: "expired" },
        now,
        cfg: timeouts,
      });
      if (res?.changed) moved++;
    }
    return moved;
  }

  function schedule() {
    timer = clock.setTimer(everyMs, () => {
      if (running) return schedule();
      running = true;
      sweep()
        .catch((err: unknown) => log.error({ err }, "deadline sweep failed"))
        .finally(() => {
          running = false;
          if (timer) schedule();
        });
    });
  }

  return {
    sweep,
    start() {
      if (!timer) schedule();
    },
    stop() {
      if (timer) clock.clearTimer(timer);
      timer = null;
    },
  };
}
