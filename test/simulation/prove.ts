import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { SCRATCH } from "./scratch.ts";

/**
 * `npm run sim:prove -- [--seeds N]`: shows that exploration finds real bugs. For each safety check below,
 * a scratch checkout of HEAD has that one check removed, and the explorer runs seeds from 1 until one fails
 * (or N ran). Prints, per check, how many seeds it took.
 */
const MUTATIONS = [
  {
    name: "the gateway's deadline check",
    file: "gateway/features/execute-command.ts",
    find: "  const expired = (req: CommandRequest) =>\n",
    replace: "  const expired = (req: CommandRequest) => false &&\n",
  },
  {
    name: "the cloud's dedupe of outbox messages by sequence number",
    file: "cloud/gateway-link/gateway-outbox-repository.ts",
    find: "return res.numInsertedOrUpdatedRows !== 0n;",
    replace: "return true;",
  },
  {
    name: "the ownership rule (a locker in use by someone else)",
    file: "shared/domain/device-use.ts",
    find: 'if (holding.inUse && holding.occupant !== actor.id) return refuse("held_by_another");',
    replace: "",
  },
];

const seedsArg = process.argv.indexOf("--seeds");
const budget = seedsArg > 0 ? Number(process.argv[seedsArg + 1]) : 50;
const root = execFileSync("git", ["rev-parse", "--show-toplevel"], { encoding: "utf8" }).trim();

for (const m of MUTATIONS) {
  const dir = mkdtempSync(path.join(SCRATCH, "parking-prove-"));
  execFileSync("git", ["-C", root, "worktree", "add", "--detach", dir, "HEAD"], { stdio: "ignore" });
  try {
    symlinkSync(path.join(root, "node_modules"), path.join(dir, "node_modules"));
    const file = path.join(dir, m.file);
    const text = readFileSync(file, "utf8");
    if (text.split(m.find).length !== 2) throw new Error(`${m.file}: the check to remove is not found once`);
    writeFileSync(file, text.replace(m.find, m.replace));
    const run = spawnSync(
      "npx",
      ["tsx", "test/simulation/explore.ts", "--seeds", String(budget), "--stop-on-failure"],
      { cwd: dir, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 },
    );
    const summary = /^(\d+) seeds, (\d+) failed.*$/m.exec(run.stdout);
    const failing = /^seed (\d+) failed/m.exec(run.stdout);
    const verdict = failing
      ? `found by seed ${failing[1]} after ${summary?.[1]} seeds`
      : `NOT found in ${summary?.[1] ?? "?"} seeds`;
    console.log(`${m.name} removed: ${verdict}`);
    if (failing)
      console.log(
        run.stdout
          .split("\n")
          .filter((l) => l.startsWith("  ") && !l.startsWith("    "))
          .join("\n"),
      );
  } finally {
    execFileSync("git", ["-C", root, "worktree", "remove", "--force", dir], { stdio: "ignore" });
    rmSync(dir, { recursive: true, force: true });
  }
}
