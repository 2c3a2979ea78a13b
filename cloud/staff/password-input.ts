import { CliExit, EXIT } from "../../shared/cli/exit-codes.ts";

/** Reads a line typed at the terminal without echoing it. */
function promptHidden(prompt: string): Promise<string> {
  const stdin = process.stdin;
  process.stderr.write(prompt);
  return new Promise((resolve, reject) => {
    let value = "";
    const finish = () => {
      stdin.setRawMode(false);
      stdin.pause();
      stdin.off("data", onData);
      process.stderr.write("\n");
    };
    const onData = (chunk: string) => {
      for (const ch of chunk) {
        if (ch === "\r" || ch === "\n") {
          finish();
          resolve(value);
          return;
        }
        if (ch === "\u0003" || ch === "\u0004") {
          finish();
          reject(new CliExit(EXIT.usage, "cancelled"));
          return;
        }
        value = ch === "\u007f" || ch === "\b" ? value.slice(0, -1) : value + ch;
      }
    };
    stdin.setEncoding("utf8");
    stdin.setRawMode(true);
    stdin.resume();
    stdin.on("data", onData);
  });
}

async function firstLineOfStdin(): Promise<string> {
  let text = "";
  for await (const chunk of process.stdin) {
    text += String(chunk);
    if (text.includes("\n")) break;
  }
  return text.split(/\r?\n/)[0] ?? "";
}

/**
 * A staff password, never from the command line (where it would land in the shell's history and in `ps`):
 * from the environment variable `envName` when it is set, else typed at a terminal (not echoed, asked
 * twice), else the first line of stdin.
 */
export async function readPassword(envName: string): Promise<string> {
  const fromEnv = process.env[envName];
  if (fromEnv) return fromEnv;
  if (!process.stdin.isTTY) return firstLineOfStdin();
  const first = await promptHidden("Password: ");
  const again = await promptHidden("Password again: ");
  if (first !== again) throw new CliExit(EXIT.usage, "the two passwords differ");
  return first;
}
