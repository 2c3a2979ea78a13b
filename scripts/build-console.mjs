#!/usr/bin/env node
/**
 * The operator console's script and style, built from console/ into <outdir>/console with hashed names (the
 * cloud then serves them as they are instead of building at start). Runs after tsc, with the cloud's own
 * build function:
 *   node scripts/build-console.mjs [--outdir dist]
 */
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";

const { values } = parseArgs({ options: { outdir: { type: "string", default: "dist" } } });
const outdir = path.resolve(values.outdir);
const { buildConsole } = await import(
  pathToFileURL(path.join(outdir, "cloud/console/console-assets.js")).href
);
const built = await buildConsole(path.resolve(import.meta.dirname, "../console"));
const target = path.join(outdir, "console");
rmSync(target, { recursive: true, force: true });
mkdirSync(target, { recursive: true });
for (const a of [built.script, built.style]) writeFileSync(path.join(target, a.name), a.body);
console.log(
  `console: ${built.script.name} (${built.script.body.length} B), ${built.style.name} (${built.style.body.length} B)`,
);
