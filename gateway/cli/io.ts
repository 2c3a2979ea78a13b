import { userInfo } from "node:os";
import { createInterface } from "node:readline/promises";

/** Everything parkctl touches of its process, so tests can run it in-process. */
export type ParkctlIo = {
  stdout: { write(text: string): unknown; isTTY: boolean };
  stderr: { write(text: string): unknown; isTTY: boolean };
  /** `question` asks on the terminal (prompt on stderr) and returns the answer; needed only when isTTY. */
  stdin: { isTTY: boolean; question?(prompt: string): Promise<string> };
  env: Record<string, string | undefined>;
  /** The operating system's name for the user running parkctl (who acted, when $USER is unset). */
  username?(): string | undefined;
  /** The working directory (a relative DATA_DIR is also looked up from here). */
  cwd?(): string;
};

export function processIo(): ParkctlIo {
  return {
    stdout: { write: (t) => process.stdout.write(t), isTTY: process.stdout.isTTY === true },
    stderr: { write: (t) => process.stderr.write(t), isTTY: process.stderr.isTTY === true },
    stdin: {
      isTTY: process.stdin.isTTY === true,
      async question(prompt) {
        const rl = createInterface({ input: process.stdin, output: process.stderr });
        try {
          return await rl.question(prompt);
        } finally {
          rl.close();
        }
      },
    },
    env: process.env,
    username() {
      try {
        return userInfo().username || undefined;
      } catch {
        return undefined; // a uid with no passwd entry (some containers)
      }
    },
    cwd: () => process.cwd(),
  };
}
