import type { Logger } from "pino";
import type { CommandExecutor } from "./execute-command.ts";
import type { TapHandler } from "./handle-tap.ts";
import { isStoreFull } from "./store-full.ts";

/**
 * Taps and commands the last stop interrupted are reported with their outcome unknown, before anything new.
 * On a full state disk (SQLITE_FULL) that report cannot be journaled: they stay as they are, to be reported
 * by the next start, and the daemon starts all the same. It can still refuse what comes and serve what
 * needs no write, where failing to start would leave a site without offline access until there is room.
 * A command left so is not actuated again when delivered again (the log has it taken); the cloud ends it
 * by its deadline.
 */
export function recoverInterrupted(
  taps: Pick<TapHandler, "recoverInterrupted">,
  executor: Pick<CommandExecutor, "recoverInterrupted">,
  log: Logger,
): void {
  const attempt = (what: string, recover: () => number): number => {
    try {
      return recover();
    } catch (err) {
      if (!isStoreFull(err)) throw err;
      log.error({ err }, `${what} interrupted by the last stop: not reported yet, the state store is full`);
      return 0;
    }
  };
  const unrecorded = attempt("taps", () => taps.recoverInterrupted());
  if (unrecorded > 0)
    log.warn(
      { taps: unrecorded },
      "taps interrupted by the last stop were reported with their outcome unknown",
    );
  const recovered = attempt("commands", () => executor.recoverInterrupted());
  if (recovered > 0)
    log.warn({ commands: recovered }, "commands interrupted by the last stop were reported as failed");
}
