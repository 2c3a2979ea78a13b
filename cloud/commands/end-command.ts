import { advanceDevice } from "../devices/advance-device.ts";
import type { CommandTimeoutConfig } from "../devices/timeouts.ts";
import type { CommandRecord } from "../store/command-record.ts";
import type { Db, Executor } from "../store/db.ts";
import { advanceCommand, type CommandStep } from "./advance-command.ts";

/**
 * Ends a command in ERROR (a failure, a deadline) and returns its device to the state it came from, in
 * one transaction; `then` adds what else the ending means (a site event) to that transaction. False when
 * the command had already ended.
 */
export function endCommand(
  db: Db,
  step: CommandStep & { input: { kind: "failed" | "deadline" }; cfg: CommandTimeoutConfig },
  then?: (trx: Executor, ended: CommandRecord) => Promise<void>,
): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const ended = await advanceCommand(trx, step);
    if (!ended) return false;
    await advanceDevice(trx, {
      deviceId: ended.device_id,
      commandId: ended.id,
      input: { kind: "failed" },
      now: step.now,
      cfg: step.cfg,
    });
    await then?.(trx, ended);
    return true;
  });
}
