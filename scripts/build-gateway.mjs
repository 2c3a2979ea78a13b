#!/usr/bin/env node
/**
 * The gateway daemon and parkctl bundled (esbuild), written over what tsc emitted for their entry points:
 * `<outdir>/gateway/main.js` (what parking-gateway.service runs) and `<outdir>/gateway/cli/parkctl.js`
 * (package.json bin), with the code they share, and what parkctl imports only for some commands (the
 * config parser), in `<outdir>/gateway/chunks/`. A handful of modules instead of ~300 costs a controller
 * less resident memory and parkctl less start-up time (README: gateway footprint; docs/decisions.md).
 * Packages with native parts stay outside and load from node_modules as usual; so does pino-pretty, which
 * the logger loads only for a terminal. The rest of the build (cloud, simulator, demo) is tsc's.
 *   node scripts/build-gateway.mjs [--outdir dist]
 */
import path from "node:path";
import { parseArgs } from "node:util";
import { build } from "esbuild";

const { values } = parseArgs({ options: { outdir: { type: "string", default: "dist" } } });

await build({
  absWorkingDir: path.resolve(import.meta.dirname, ".."),
  entryPoints: { "gateway/main": "gateway/main.ts", "gateway/cli/parkctl": "gateway/cli/parkctl.ts" },
  outdir: path.resolve(values.outdir),
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node22",
  // parkctl's config parser (zod, yaml) in a chunk of its own, loaded by the commands that read a config.
  splitting: true,
  chunkNames: "gateway/chunks/[name]-[hash]",
  // Whitespace and syntax only: identifiers keep their names, so class names in logged errors stay those
  // of the sources. The map is not loaded unless asked for (`node --enable-source-maps`), and then gives
  // stack traces the sources' files and lines.
  minifyWhitespace: true,
  minifySyntax: true,
  sourcemap: "linked",
  external: ["better-sqlite3", "@serialport/bindings-cpp", "onoff", "pino-pretty"],
  // The CommonJS packages bundled call require() for Node's own modules; an ES module has none of its own.
  banner: {
    js: 'import { createRequire as __createRequire } from "node:module"; const require = __createRequire(import.meta.url);',
  },
  logLevel: "warning",
});
