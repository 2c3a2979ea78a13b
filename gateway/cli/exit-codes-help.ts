import { BROKEN_PIPE_EXIT } from "../../shared/node/broken-pipe.ts";

/**
 * parkctl's exit codes (the table is shared/cli/exit-codes.ts) as its --help lists them, like
 * gateway/cli/README.md; scripts rely on them.
 */
export const EXIT_CODES_HELP = `Exit codes:
  0  ok
  1  unexpected error
  2  usage error, including a refused or missing confirmation
  3  gateway daemon unreachable (not running, no permission on the socket, or no answer in time)
  4  device not found
  5  actuation failed (the device did not reach the state)
  6  doctor or config validate found a failure
  ${BROKEN_PIPE_EXIT}  the reader of its output went away (| head)`;
