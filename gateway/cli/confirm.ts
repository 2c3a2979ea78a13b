import { CliExit, EXIT } from "../../shared/cli/exit-codes.ts";
import type { ParkctlIo } from "./io.ts";

/**
 * Destructive actions go ahead only when confirmed: --yes, or "y" typed at a terminal. Without a
 * terminal on stdin (a script, a pipe, ssh without -t) and without --yes they are refused (exit 2).
 */
export function refuseWithoutTerminal(io: ParkctlIo, yes: boolean, what: string): void {
  if (yes || io.stdin.isTTY) return;
  throw new CliExit(
    EXIT.usage,
    `refusing to ${what} without confirmation: stdin is not a terminal; add --yes to confirm`,
  );
}

export async function confirm(io: ParkctlIo, yes: boolean, question: string): Promise<void> {
  if (yes) return;
  if (!io.stdin.isTTY || !io.stdin.question)
    throw new CliExit(EXIT.usage, `refusing without confirmation: ${question}`);
  const answer = await io.stdin.question(`${question} [y/N] `);
  if (!/^\s*y(es)?\s*$/i.test(answer)) throw new CliExit(EXIT.usage, "not confirmed; nothing was done");
}
