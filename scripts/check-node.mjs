// Does the running Node.js meet package.json's engines (a list of caret ranges, "^22.14.0 || ^24.0.0")?
// Exit 0 if so; otherwise say in one line what to run (unless --quiet) and exit 1. Run first by the npm scripts
// whose programs do not check for themselves (tsc, biome, vitest, the benches; the project's own programs
// import shared/node/supported-node.ts, the same rule), and by scripts/with-node.sh to decide whether the
// machine's Node will do.
import { readFileSync } from "node:fs";

const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"));
const wanted = pkg.engines.node.split("||").map((r) => r.trim().replace(/^\^/, "").split(".").map(Number));
const [M, m, p] = process.versions.node.split(".").map(Number);
const ok = wanted.some(([wM, wm, wp]) => M === wM && (m > wm || (m === wm && p >= wp)));
if (!ok && !process.argv.includes("--quiet")) {
  // One line naming the command to run instead: the npm script that ran this, under Node 24.
  const script = process.env.npm_lifecycle_event;
  const command = !script
    ? "<command>"
    : script === "start" || script === "test"
      ? `npm ${script}`
      : `npm run ${script}`;
  console.error(
    `Node.js ${process.version} is not supported (package.json engines: ${pkg.engines.node}); ` +
      `run: scripts/with-node.sh 24 ${command}`,
  );
}
process.exit(ok ? 0 : 1);
