import { execFile } from "node:child_process";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { FUZZ_USAGE, parseFuzzArgs } from "../fuzz/fuzz-args.ts";

const root = path.resolve(import.meta.dirname, "../..");

/** Runs `npm run fuzz`'s script through tsx; resolves with its exit code and output. */
function fuzzCli(args: string[]) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((done) => {
    execFile(
      process.execPath,
      ["--import", "tsx", path.join(root, "test/fuzz/cli.ts"), ...args],
      { cwd: root, env: { PATH: process.env.PATH ?? "" } },
      (err, stdout, stderr) => done({ code: err ? (err.code as number) : 0, stdout, stderr }),
    );
  });
}

describe("npm run fuzz's command line", () => {
  it("prints the usage on stdout and exits 0 for --help and -h, without starting a cloud", async () => {
    for (const flag of ["--help", "-h"]) {
      const res = await fuzzCli([flag]);
      expect(res, flag).toMatchObject({ code: 0, stdout: FUZZ_USAGE, stderr: "" });
    }
  });

  it("refuses an unknown option with exit 2 and a pointer to --help, no stack trace", async () => {
    const res = await fuzzCli(["--reqests", "5"]);
    expect(res.code).toBe(2);
    expect(res.stdout).toBe("");
    expect(res.stderr).toContain("Unknown option '--reqests'");
    expect(res.stderr).toContain("run with --help for usage");
    expect(res.stderr).not.toMatch(/\n\s+at /);
  });

  it("reads the options with their defaults and refuses bad values", () => {
    const seed = () => 7;
    expect(parseFuzzArgs([], seed)).toEqual({
      kind: "run",
      options: { requests: 10_000, seed: 7, db: "sqlite", socketShare: 0.1 },
    });
    expect(
      parseFuzzArgs(["--requests", "50", "--seed=-3", "--db", "postgres", "--socket-share", "0"], seed),
    ).toEqual({ kind: "run", options: { requests: 50, seed: -3, db: "postgres", socketShare: 0 } });
    expect(parseFuzzArgs(["--help", "--requests", "x"], seed)).toEqual({ kind: "help" });
    for (const [argv, message] of [
      [["--requests", "0"], "--requests must be a positive integer"],
      [["--seed", "1.5"], "--seed must be an integer"],
      [["--db", "mysql"], "--db must be sqlite or postgres"],
      [["--socket-share", "2"], "--socket-share must be a number from 0 to 1"],
      [["extra"], "Unexpected argument 'extra'"],
    ] as const) {
      const parsed = parseFuzzArgs([...argv], seed);
      expect(parsed.kind, argv.join(" ")).toBe("usage_error");
      expect(parsed.kind === "usage_error" && parsed.message, argv.join(" ")).toContain(message);
    }
  });
});
