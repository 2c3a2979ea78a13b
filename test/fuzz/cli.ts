/**
 * The long fuzz run: `npm run fuzz -- --requests 100000 [--seed N] [--db sqlite|postgres] [--socket-share 0.1]`
 * (`--help` for the usage). Prints the figures and exits 1 on any violation, after shrinking the first one
 * to a small counterexample (fast-check's report, replayable with the seed and path it prints).
 */
// First: on an unsupported Node this stops with what to run instead, before the rest loads.
import "../../shared/node/supported-node.ts";
import fc from "fast-check";
import { exitQuietlyOnBrokenPipe } from "../../shared/node/broken-pipe.ts";
import { FUZZ_USAGE, parseFuzzArgs } from "./fuzz-args.ts";

exitQuietlyOnBrokenPipe();
const args = parseFuzzArgs(process.argv.slice(2), () => Date.now() ^ (Math.random() * 0x100000000));
if (args.kind === "help") {
  process.stdout.write(FUZZ_USAGE);
  process.exit(0);
}
if (args.kind === "usage_error") {
  process.stderr.write(`fuzz: ${args.message}\n(run with --help for usage)\n`);
  process.exit(2);
}
const { requests, seed, socketShare, db } = args.options;
// The harness opens its store from TEST_DB (test/support/test-db.ts); loaded only now, after the options.
process.env.TEST_DB = db;
const { startCloudHarness } = await import("../support/cloud-harness.ts");
const { declareFixtureWhitelists } = await import("../support/fixture-whitelists.ts");
const { formatFigures, violationCount } = await import("./fuzz-report.ts");
const { startFuzzTarget } = await import("./fuzz-target.ts");

const h = await startCloudHarness();
let exitCode = 0;
try {
  await declareFixtureWhitelists(h);
  const target = await startFuzzTarget(h, { socketShare });
  console.error(`fuzzing ${target.operations.length} operations with ${requests} requests, seed ${seed}`);
  const started = performance.now();
  let firstViolation: number | undefined;
  let run = 0;
  const everyTenth = Math.max(1, Math.floor(requests / 10));
  // Every request is sent and judged; violations are counted rather than stopping the run.
  const collected = await fc.check(
    fc.asyncProperty(target.requests, async (req) => {
      const index = run++;
      const outcome = await target.send(req);
      if (outcome.violations.length > 0) firstViolation ??= index;
      if ((index + 1) % everyTenth === 0) {
        const rate = Math.round((index + 1) / ((performance.now() - started) / 1000));
        console.error(`  ${index + 1} sent, ${rate} requests/s, ${violationCount(target.stats)} violations`);
      }
      return true;
    }),
    { seed, numRuns: requests, includeErrorInReport: true },
  );
  // Only the harness itself can fail here (judging never throws): report it as fast-check does.
  if (collected.failed) throw new Error(fc.defaultReportMessage(collected));
  const elapsed = performance.now() - started;
  console.log(formatFigures(target.stats, elapsed, { seed, db }));

  if (firstViolation !== undefined) {
    exitCode = 1;
    console.log(`\nfirst ${target.stats.examples.length} violating exchanges:\n`);
    for (const e of target.stats.examples) console.log(`${e}\n`);
    // Replays request #firstViolation from the same seed and shrinks it (the store has moved on since).
    const shrunk = await fc.check(
      fc.asyncProperty(target.requests, async (req) => {
        const outcome = await target.send(req);
        if (outcome.violations.length > 0) throw new Error(outcome.report);
      }),
      { seed, path: String(firstViolation), includeErrorInReport: true },
    );
    console.log(
      shrunk.failed ? fc.defaultReportMessage(shrunk) : "the first violation did not recur on replay",
    );
  }
} finally {
  await h.close();
}
process.exit(exitCode);
