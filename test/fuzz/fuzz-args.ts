import { parseArgs } from "node:util";

/** The long fuzz run's options, as `npm run fuzz -- …` takes them. */
export type FuzzOptions = { requests: number; seed: number; db: "sqlite" | "postgres"; socketShare: number };

export type FuzzArgs =
  | { kind: "run"; options: FuzzOptions }
  | { kind: "help" }
  /** A usage mistake: say what, point at --help, exit 2. */
  | { kind: "usage_error"; message: string };

export const FUZZ_USAGE = `Usage: npm run fuzz -- [options]

Sends generated requests (from the served OpenAPI document) to an in-process cloud and counts every
answer that breaks the contract: a 5xx, an error outside the spec's error body, a status the document
does not list. Prints the figures; exits 1 on any violation, after shrinking the first one.

Options:
  --requests <n>        how many requests to send (default 10000)
  --seed <n>            fast-check seed, to replay a run (default: a fresh one, printed)
  --db <sqlite|postgres> the store under test (default sqlite)
  --socket-share <0..1> the share of requests sent over a real socket (default 0.1)
  -h, --help            show this help

Exit codes: 0 no violation, 1 violations found, 2 usage error.

Example:
  npm run fuzz -- --requests 100000 --db postgres --seed 42
`;

/** Reads the command line; never throws (an unknown option is a usage error, not a stack trace). */
export function parseFuzzArgs(argv: string[], freshSeed: () => number): FuzzArgs {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        requests: { type: "string", default: "10000" },
        seed: { type: "string" },
        db: { type: "string", default: "sqlite" },
        "socket-share": { type: "string", default: "0.1" },
        help: { type: "boolean", short: "h", default: false },
      },
    }));
  } catch (err) {
    return { kind: "usage_error", message: err instanceof Error ? err.message : String(err) };
  }
  if (values.help) return { kind: "help" };
  const requests = Number(values.requests);
  const seed = values.seed === undefined ? freshSeed() : Number(values.seed);
  const socketShare = Number(values["socket-share"]);
  const db = values.db;
  if (!Number.isInteger(requests) || requests < 1)
    return { kind: "usage_error", message: "--requests must be a positive integer" };
  if (!Number.isInteger(seed)) return { kind: "usage_error", message: "--seed must be an integer" };
  if (db !== "sqlite" && db !== "postgres")
    return { kind: "usage_error", message: "--db must be sqlite or postgres" };
  if (!(socketShare >= 0 && socketShare <= 1))
    return { kind: "usage_error", message: "--socket-share must be a number from 0 to 1" };
  return { kind: "run", options: { requests, seed, db, socketShare } };
}
