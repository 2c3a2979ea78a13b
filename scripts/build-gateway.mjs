#!/usr/bin/env node
/**
 * The gateway daemon and parkctl bundled (esbuild), written over what tsc emitted for their entry points:
 * `<outdir>/gateway/main.js` (what parking-gateway.service runs), one module, and
 * `<outdir>/gateway/cli/parkctl.js` (package.json bin), with what parkctl imports only for some commands
 * (the config parser) in `<outdir>/gateway/cli/chunks/`. A few modules instead of ~300 cost a controller
 * less resident memory and parkctl less start-up time (docs/benchmarks.md, gateway footprint;
 * docs/decisions/gateway-memory.md).
 * Packages with native parts stay outside and load from node_modules as usual; so does pino-pretty, which
 * the logger loads only for a terminal. The rest of the build (cloud, simulator, demo) is tsc's.
 *   node scripts/build-gateway.mjs [--outdir dist]
 */
import path from "node:path";
import { parseArgs } from "node:util";
import { build } from "esbuild";

const { values } = parseArgs({ options: { outdir: { type: "string", default: "dist" } } });

/** @type {import("esbuild").BuildOptions} */
const common = {
  absWorkingDir: path.resolve(import.meta.dirname, ".."),
  outdir: path.resolve(values.outdir),
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node22",
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
};

// The daemon in one module: split into chunks it ran ~5 MB larger (more of V8's optimising compiler ran
// at start-up, its code pages resident; measured with bench:footprint).
await build({ ...common, entryPoints: { "gateway/main": "gateway/main.ts" } });
// parkctl's config parser (zod, yaml) in a chunk of its own, loaded by the commands that read a config.
await build({
  ...common,
  entryPoints: { "gateway/cli/parkctl": "gateway/cli/parkctl.ts" },
  splitting: true,
  chunkNames: "gateway/cli/chunks/[name]-[hash]",
});
