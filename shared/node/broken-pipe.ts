/**
 * What a command-line tool exits with when its reader went away (`manifest schema | head -1`): 128 +
 * SIGPIPE, as a shell reports a program that signal ended (`yes | head`).
 */
export const BROKEN_PIPE_EXIT = 141;

/**
 * A tool's output piped into a reader that stops early fails its next write with EPIPE, which Node
 * reports as an unhandled 'error' with a stack trace. The reader has had what it wanted: end quietly.
 * Any other error of the streams stays what it was.
 */
export function exitQuietlyOnBrokenPipe(
  streams: readonly NodeJS.WriteStream[] = [process.stdout, process.stderr],
): void {
  for (const stream of streams)
    stream.on("error", (err: NodeJS.ErrnoException) => {
      if (err.code !== "EPIPE") throw err;
      process.exit(BROKEN_PIPE_EXIT);
    });
}
