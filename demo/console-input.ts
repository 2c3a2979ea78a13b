import { readFileSync } from "node:fs";
import { createInterface } from "node:readline";
import type { Readable } from "node:stream";
import type { DemoConsole } from "./demo-console.ts";

/**
 * Feeds the console a line at a time from a stream (the demo's stdin, a TTY or a pipe) and writes each
 * answer; commands run one after the other. With a prompt (on a terminal) it is written at the start and
 * after each answer, so a person sees the console is listening among the log lines. The end of the stream
 * ends the console only: the demo runs on. Returns a function that stops listening.
 */
export function attachDemoConsole(
  demoConsole: DemoConsole,
  input: Readable,
  output: { write(text: string): unknown },
  o: { prompt?: string } = {},
): () => void {
  const rl = createInterface({ input, terminal: false });
  const prompt = () => {
    if (o.prompt) output.write(o.prompt);
  };
  let queue = Promise.resolve();
  rl.on("line", (line) => {
    queue = queue.then(async () => {
      const reply = await demoConsole.runLine(line);
      if (reply) output.write(`${reply}\n`);
      prompt();
    });
  });
  // A stdin that cannot be read (closed, a terminal gone) only ends the console.
  input.on("error", () => rl.close());
  prompt();
  return () => rl.close();
}

/** The console's prompt on a terminal. */
export const DEMO_PROMPT = "demo> ";

/**
 * Whether this process runs in the background of its terminal (`npm start &`): reading the terminal
 * there would stop the whole demo (SIGTTIN), so the console stays off. Linux only; elsewhere false.
 */
export function inBackgroundOfTerminal(statText?: string): boolean {
  let text = statText;
  if (text === undefined) {
    try {
      text = readFileSync("/proc/self/stat", "utf8");
    } catch {
      return false;
    }
  }
  // Fields after the command name (which may hold spaces and parentheses): state ppid pgrp session tty_nr tpgid.
  const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
  const pgrp = Number(fields[2]);
  const tpgid = Number(fields[5]);
  return Number.isInteger(pgrp) && Number.isInteger(tpgid) && tpgid > 0 && pgrp !== tpgid;
}
