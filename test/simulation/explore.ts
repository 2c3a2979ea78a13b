import { Command } from "commander";
import { runSeed } from "./run-seed.ts";

/**
 * `npm run sim:explore -- --seeds N [--from S]`: runs seeds S..S+N-1 and ends with `N seeds, M failed`;
 * `npm run sim:explore -- --seed S`: replays one seed and prints its `trace <hash>`.
 */
const program = new Command("sim:explore")
  .option("--seeds <n>", "how many seeds to run", (v) => Number.parseInt(v, 10))
  .option("--from <seed>", "the first seed of --seeds", (v) => Number.parseInt(v, 10), 1)
  .option("--seed <seed>", "replay one seed", (v) => Number.parseInt(v, 10))
  .option("--chaos <s>", "virtual seconds of workload and faults", (v) => Number(v), 60)
  .option("--quiet <s>", "virtual seconds after the faults heal", (v) => Number(v), 90)
  .option("--stop-on-failure", "end at the first failing seed")
  .parse();
const o = program.opts<{
  seeds?: number;
  from: number;
  seed?: number;
  chaos: number;
  quiet: number;
  stopOnFailure?: boolean;
}>();

const seeds = o.seed !== undefined ? [o.seed] : Array.from({ length: o.seeds ?? 10 }, (_, i) => o.from + i);
const started = performance.now();
let failed = 0;
let virtualMs = 0;
let ran = 0;
for (const seed of seeds) {
  ran++;
  const r = await runSeed({ seed, chaosMs: o.chaos * 1000, quietMs: o.quiet * 1000 });
  virtualMs += r.virtualMs;
  if (o.seed !== undefined) console.log(`trace ${r.trace}`);
  if (r.failures.length === 0) continue;
  failed++;
  console.log(`seed ${seed} failed (trace ${r.trace}):`);
  for (const f of r.failures) console.log(`  ${f}`);
  console.log("  last events:");
  for (const line of r.tail) console.log(`    ${line}`);
  if (o.stopOnFailure) break;
}
const wallS = (performance.now() - started) / 1000;
console.log(
  `${ran} seeds, ${failed} failed (${(ran / wallS).toFixed(2)} seeds/s, ${(virtualMs / 1000 / wallS).toFixed(0)} virtual s per wall s)`,
);
process.exitCode = failed > 0 ? 1 : 0;
