import { readFileSync } from "node:fs";
import path from "node:path";
import { PACKAGE_ROOT } from "./package-root.ts";

/**
 * Imported first by every program's entry point (`import "…/supported-node.ts"`), so that on a Node.js outside
 * package.json's engines the program stops before the rest of it loads, with one line naming the command to
 * run instead. Without it a newer Node's API fails as the module graph is linked (a SyntaxError quoting a
 * line of the bundle) and the SQLite driver crashes. The rule is scripts/check-node.mjs's, which guards the
 * npm scripts that run no program of the project (tsc, biome, vitest).
 */
export type NodeVersionCheck = {
  versions: { node: string };
  engines: string;
  argv: readonly string[];
  env: Record<string, string | undefined>;
  cwd: string;
};

/** Does `node` (22.14.0) meet `engines` (caret ranges joined by ||, "^22.14.0 || ^24.0.0")? */
export function meetsEngines(node: string, engines: string): boolean {
  const [M = 0, m = 0, p = 0] = node.split(".").map(Number);
  return engines
    .split("||")
    .map((r) => r.trim().replace(/^\^/, "").split(".").map(Number))
    .some(([wM, wm = 0, wp = 0]) => M === wM && (m > wm || (m === wm && p >= wp)));
}

/** The one line to print on an unsupported Node, or null when this Node will do. */
export function unsupportedNodeMessage(check: NodeVersionCheck): string | null {
  if (meetsEngines(check.versions.node, check.engines)) return null;
  return (
    `Node.js v${check.versions.node} is not supported (package.json engines: ${check.engines}); ` +
    `run: ${withNode24(check)}`
  );
}

/** The command line that ran this program, under scripts/with-node.sh 24. */
function withNode24({ argv, env, cwd }: NodeVersionCheck): string {
  const args = argv.slice(2).map(shellQuote).join(" ");
  const script = env.npm_lifecycle_event;
  let command: string;
  if (script) {
    const npm = script === "start" || script === "test" ? `npm ${script}` : `npm run ${script}`;
    command = args ? `${npm} -- ${args}` : npm;
  } else {
    const entry = relativeTo(cwd, argv[1] ?? "");
    command = `${entry.endsWith(".ts") ? "npx tsx" : "node"} ${entry}${args ? ` ${args}` : ""}`;
  }
  return `${relativeTo(cwd, path.join(PACKAGE_ROOT, "scripts/with-node.sh"))} 24 ${command}`;
}

/** A path as typed from `cwd`: relative below it, absolute elsewhere. */
function relativeTo(cwd: string, file: string): string {
  const rel = path.relative(cwd, file);
  return rel && !rel.startsWith("..") && !path.isAbsolute(rel) ? rel : file;
}

function shellQuote(arg: string): string {
  return /^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replaceAll("'", `'\\''`)}'`;
}

const engines = (
  JSON.parse(readFileSync(path.join(PACKAGE_ROOT, "package.json"), "utf8")) as {
    engines: { node: string };
  }
).engines.node;
const message = unsupportedNodeMessage({
  versions: process.versions,
  engines,
  argv: process.argv,
  env: process.env,
  cwd: process.cwd(),
});
if (message) {
  console.error(message);
  process.exit(1);
}
