import { type Command, CommanderError } from "commander";
import { CliExit, EXIT, type ExitCode } from "../cli/exit-codes.ts";

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

/**
 * Runs a tool made of subcommands (manifest, operator) and exits with the code its table gives: Commander's
 * own stops as usage errors (or success for --help/--version), a CliExit with its code, anything else 1.
 */
export function runSubcommands(program: Command): void {
  program.exitOverride();
  for (const c of program.commands) c.exitOverride();
  program.parseAsync().catch((err: unknown) => {
    if (err instanceof CommanderError) process.exit(err.exitCode === 0 ? EXIT.ok : commanderExitCode(err));
    if (err instanceof CliExit) {
      console.error(err.message);
      process.exit(err.code);
    }
    console.error(`${program.name()}: unexpected error: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(EXIT.unexpected);
  });
}
