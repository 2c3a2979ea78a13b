import { advanceDevice } from "../devices/advance-device.ts";
import type { Db } from "../store/db.ts";
import { advanceCommand, type CommandStep } from "./advance-command.ts";
import type { CommandTimeoutConfig } from "./timeouts.ts";

/**
 * Ends a command in ERROR (a failure, a deadline) and returns its device to the state it came from, in
 * one transaction. False when the command had already ended.
 */
export function endCommand(
  db: Db,
  step: CommandStep & { input: { kind: "failed" | "deadline" }; cfg: CommandTimeoutConfig },
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
    return true;
  });
}
