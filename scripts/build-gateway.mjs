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

const external = ["better-sqlite3", "@serialport/bindings-cpp", "onoff", "pino-pretty"];

/**
 * Packages left outside the bundle are loaded by require() where the bundle first uses them, not by import
 * statements: an ES module's imports all load before its first line runs, so onoff's native addon (built
 * for another Node) would fail before shared/node/supported-node.ts, first in the bundle, could name the
 * Node to run.
 */
const requireExternals = {
  name: "require-externals",
  /** @param {import("esbuild").PluginBuild} b */
  setup(b) {
    const filter = new RegExp(`^(${external.map((e) => e.replace(/[/.]/g, "\\$&")).join("|")})(/.*)?$`);
    // The shim's own require() stays a require() of the package (external); every other import gets the shim.
    b.onResolve({ filter }, (args) =>
      args.namespace === "require-external"
        ? { path: args.path, external: true }
        : { path: args.path, namespace: "require-external" },
    );
    b.onLoad({ filter: /.*/, namespace: "require-external" }, (args) => ({
      contents: `module.exports = require(${JSON.stringify(args.path)});`,
      loader: "js",
    }));
  },
};

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
  plugins: [requireExternals],
  // readable-stream is a copy of Node's streams for other runtimes (mqtt's client and bl use it): Node's
  // own, loaded anyway, take its place, ~0.5 MB less resident memory (docs/decisions/gateway-memory.md).
  alias: { "readable-stream": "node:stream" },
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
