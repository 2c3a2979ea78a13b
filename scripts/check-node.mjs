// Does the running Node.js meet package.json's engines (a list of caret ranges, "^22.14.0 || ^24.0.0")?
// Exit 0 if so; otherwise say what to do (unless --quiet) and exit 1. Run before `npm start` and `npm test`,
// and by scripts/with-node.sh to decide whether the machine's Node will do.
import { readFileSync } from "node:fs";

const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"));
const wanted = pkg.engines.node.split("||").map((r) => r.trim().replace(/^\^/, "").split(".").map(Number));
const [M, m, p] = process.versions.node.split(".").map(Number);
const ok = wanted.some(([wM, wm, wp]) => M === wM && (m > wm || (m === wm && p >= wp)));
if (!ok && !process.argv.includes("--quiet")) {
  console.error(
    `Node.js ${process.version} is not supported (package.json engines: ${pkg.engines.node}).\n` +
      "Install and run under Node 24 from the npm registry instead:\n" +
      "  scripts/with-node.sh 24 npm ci && scripts/with-node.sh 24 npm start   (or npm test)",
  );
}
process.exit(ok ? 0 : 1);
