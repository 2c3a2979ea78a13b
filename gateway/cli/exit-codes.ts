/** parkctl's exit codes: documented in `parkctl --help` and gateway/cli/README.md; scripts rely on them. */
import { EXIT, type ExitCode } from "../../shared/cli/exit-codes.ts";

export { EXIT, type ExitCode };

export const EXIT_CODES_HELP = `Exit codes:
  0  ok
  1  unexpected error
  2  usage error, including a refused or missing confirmation
  3  gateway daemon unreachable (not running, no permission on the socket, or no answer in time)
  4  device not found
  5  actuation failed (the device did not reach the state)
  6  doctor or config validate found a failure`;

/** Thrown by a command to end the run with a code and a message for stderr. */
export class CliExit extends Error {
  constructor(
    readonly code: ExitCode,
    message: string,
  ) {
    super(message);
    this.name = "CliExit";
  }
}
