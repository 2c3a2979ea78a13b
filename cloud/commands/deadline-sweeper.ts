import type { Logger } from "pino";
import type { Clock, TimerHandle } from "../../shared/clock.ts";
import type { Db } from "../store/db.ts";
import { advanceCommand, advanceDevice } from "./command-store.ts";
import type { CommandTimeoutConfig } from "./timeouts.ts";

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
}) {
  const { db, clock, timeouts, log } = deps;
  const everyMs = deps.everyMs ?? 1_000;
  let timer: TimerHandle | null = null;
  let running = false;

  async function sweep(): Promise<number> {
    const now = clock.now();
    const ts = now.toISOString();
    let moved = 0;
    const due = await db
      .selectFrom("commands")
      .select(["id", "device_id"])
      .where("state_value", "in", ["NOT_SENT", "SENT", "RECEIVED"])
      .where("state_timeout_at", "<=", ts)
      .limit(500)
      .execute();
    for (const c of due) {
      await db.transaction().execute(async (trx) => {
        const row = await advanceCommand(trx, c.id, { kind: "deadline" }, now, timeouts, (s) => [
          { name: "REQUEST_TIMED_OUT", value: s.reason, timestamp: ts },
        ]);
        if (!row) return;
        moved++;
        await advanceDevice(trx, {
          deviceId: c.device_id,
          commandId: c.id,
          input: { kind: "failed" },
          now,
          cfg: timeouts,
        });
      });
    }
    const expiring = await db
      .selectFrom("devices")
      .select("id")
      .where("state_timeout_at", "<=", ts)
      .where("command_id", "is", null)
      .limit(500)
      .execute();
    for (const d of expiring) {
      const res = await advanceDevice(db, {
        deviceId: d.id,
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
