import { createRequire } from "node:module";

/**
 * better-sqlite3 13 and later are Node-API 10 addons. Node 20, and 22 before 22.14, load one anyway and then
 * die with SIGSEGV in the first `new Database()`, with no message; a service would restart into the same
 * crash. Both stores call this before opening SQLite, so that case says what it needs instead. It asks
 * the driver that is installed, so a node_modules from before 13 (whose driver ran on Node 20) still runs.
 */
export const SQLITE_NODE_API = 10;

const DRIVER_VERSION = (createRequire(import.meta.url)("better-sqlite3/package.json") as { version: string })
  .version;

export function assertSqliteRuntime(
  versions: { node: string; napi?: string } = process.versions,
  driver: string = DRIVER_VERSION,
): void {
  if (Number(driver.split(".")[0]) < 13 || Number(versions.napi) >= SQLITE_NODE_API) return;
  throw new Error(
    `SQLite (better-sqlite3 ${driver}) needs Node.js 22.14 or later (Node-API ${SQLITE_NODE_API}); this is ` +
      `Node.js ${versions.node} (Node-API ${versions.napi ?? "none"}). The project runs on Node.js 24 LTS or ` +
      "22.14+: see the README's quick start.",
  );
}
