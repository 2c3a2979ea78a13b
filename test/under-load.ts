/**
 * Runs the suites that cross processes, sockets and brokers (contracts, gateway, simulator, cloud, e2e, ops, browser)
 * several times in a row beside busy CPU hogs, the way a loaded CI machine runs them:
 * `npm run test:load -- [--runs 5] [--hogs 2] [-- extra vitest args]`. A suite that only passes on a quiet
 * machine fails here. Exits non-zero when any run fails.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { parseArgs } from "node:util";

const CROSSING = ["contracts", "gateway", "simulator", "cloud", "e2e", "ops", "browser", "faults"];

const { values, positionals } = parseArgs({
  options: { runs: { type: "string", default: "5" }, hogs: { type: "string", default: "2" } },
  allowPositionals: true,
});
const runs = Number(values.runs);
const hogCount = Number(values.hogs);
if (!Number.isInteger(runs) || runs < 1 || !Number.isInteger(hogCount) || hogCount < 0) {
  console.error("usage: npm run test:load -- [--runs N] [--hogs N] [vitest args…]");
  process.exit(2);
}

const hogs: ChildProcess[] = Array.from({ length: hogCount }, () =>
  spawn(process.execPath, ["-e", "for (;;) {}"], { stdio: "ignore" }),
);
const stopHogs = () => {
  for (const h of hogs) h.kill("SIGKILL");
};
process.on("exit", stopHogs);
process.on("SIGINT", () => process.exit(130));

function vitest(): Promise<number> {
  return new Promise((resolve) => {
    const projects = CROSSING.flatMap((p) => ["--project", p]);
    const child = spawn("npx", ["vitest", "run", ...projects, ...positionals], {
      stdio: "inherit",
    });
    child.on("exit", (code) => resolve(code ?? 1));
  });
}

const results: { run: number; ok: boolean; seconds: number }[] = [];
for (let run = 1; run <= runs; run++) {
  const t0 = performance.now();
  process.stdout.write(`\n=== run ${run}/${runs} beside ${hogCount} CPU hogs ===\n`);
  const code = await vitest();
  results.push({ run, ok: code === 0, seconds: Math.round((performance.now() - t0) / 1000) });
}
stopHogs();
process.stdout.write("\nruns beside CPU hogs:\n");
for (const r of results)
  process.stdout.write(`  run ${r.run}: ${r.ok ? "passed" : "FAILED"} in ${r.seconds} s\n`);
const failed = results.filter((r) => !r.ok).length;
process.stdout.write(`${runs - failed} of ${runs} passed\n`);
process.exit(failed === 0 ? 0 : 1);
