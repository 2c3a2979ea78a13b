/**
 * Exit codes shared by every command-line tool of the project (parkctl's table, gateway/cli/README.md):
 * scripts rely on them, so a code keeps its meaning across tools.
 */
export const EXIT = {
  ok: 0,
  /** Anything unexpected, including an error a daemon or the store reported. */
  unexpected: 1,
  /** The command line was wrong, or a confirmation was refused. */
  usage: 2,
  /** What the tool talks to is unreachable: the gateway daemon, the database. */
  unreachable: 3,
  notFound: 4,
  actuationFailed: 5,
  /** A check failed, or the input (a config file, a manifest, the environment it names) is invalid. */
  checkFailed: 6,
} as const;
export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/**
 * Thrown by a command-line tool's command to end the run with a code of the table above; the message goes
 * to stderr. One class for every tool, so `instanceof` holds wherever it is caught.
 */
export class CliExit extends Error {
  constructor(
    readonly code: ExitCode,
    message: string,
  ) {
    super(message);
    this.name = "CliExit";
  }
}
