import { type Command, CommanderError } from "commander";
import { EXIT, type ExitCode } from "./exit-codes.ts";

/** Commander's own stops: --help and --version are successes, anything else a usage error (it said why). */
export function commanderExitCode(err: CommanderError): ExitCode {
  return err.code === "commander.helpDisplayed" || err.code === "commander.version" ? EXIT.ok : EXIT.usage;
}

/** The exit codes of the long-running programs (the cloud, the gateway daemon, the demo), for their --help. */
export const SERVICE_EXIT_CODES_HELP =
  "Exit codes: 0 stopped cleanly, 1 start-up failure, 2 usage error, 6 invalid configuration.";

/**
 * Parses the process's arguments. Commander does not exit the process itself: this returns the exit code
 * when the command line ends the run (help, version, a usage error), or null to go on.
 */
export function parseCommandLine(program: Command): ExitCode | null {
  try {
    program.exitOverride().parse();
    return null;
  } catch (err) {
    if (err instanceof CommanderError) return commanderExitCode(err);
    throw err;
  }
}
