import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";

/** One file of the console's first load: hashed name, type, bytes. */
export type ConsoleAsset = { name: string; type: string; body: Buffer };

export type ConsoleAssets = { script: ConsoleAsset; style: ConsoleAsset; byName: Map<string, ConsoleAsset> };

/**
 * `console/` beside `cloud/`: in a clone, the sources (console/app.tsx); in a build, what
 * scripts/build-console.mjs wrote (dist/console beside dist/cloud).
 */
const CONSOLE_DIR = path.resolve(import.meta.dirname, "../../console");

const TYPES: Record<string, string> = {
  js: "text/javascript; charset=utf-8",
  css: "text/css; charset=utf-8",
};

function asset(ext: "js" | "css", body: Buffer): ConsoleAsset {
  const name = `console-${createHash("sha256").update(body).digest("hex").slice(0, 12)}.${ext}`;
  return { name, type: TYPES[ext] as string, body };
}

function assets(script: Buffer, style: Buffer): ConsoleAssets {
  const js = asset("js", script);
  const css = asset("css", style);
  return { script: js, style: css, byName: new Map([js, css].map((a) => [a.name, a])) };
}

/** Builds the console from its sources with esbuild, in memory. */
export async function buildConsole(sources: string): Promise<ConsoleAssets> {
  const { build } = await import("esbuild");
  const out = await build({
    entryPoints: [path.join(sources, "app.tsx")],
    bundle: true,
    format: "esm",
    target: "es2022",
    jsx: "automatic",
    jsxImportSource: "preact",
    minify: true,
    legalComments: "none",
    write: false,
    outdir: "out",
  });
  const script = out.outputFiles.find((f) => f.path.endsWith(".js"));
  if (!script) throw new Error("the console's bundle came out empty");
  return assets(Buffer.from(script.contents), readFileSync(path.join(sources, "console.css")));
}

/**
 * The console's script and style: those `npm run build` wrote, or else built now from the sources (`npm start`
 * in a clone needs no build step).
 */
export function loadConsoleAssets(dir = CONSOLE_DIR): Promise<ConsoleAssets> {
  const files = existsSync(dir) ? readdirSync(dir) : [];
  const built = (ext: string) => files.find((f) => /^console-[0-9a-f]{12}\./.test(f) && f.endsWith(ext));
  const js = built(".js");
  const css = built(".css");
  if (js && css)
    return Promise.resolve(assets(readFileSync(path.join(dir, js)), readFileSync(path.join(dir, css))));
  if (files.includes("app.tsx")) return buildConsole(dir);
  return Promise.reject(new Error(`no console at ${dir}: neither its sources nor a build (npm run build)`));
}

let loaded: Promise<ConsoleAssets> | null = null;

/** The assets, loaded once per process (every app of a test run shares them). */
export function consoleAssets(): Promise<ConsoleAssets> {
  loaded ??= loadConsoleAssets();
  return loaded;
}
