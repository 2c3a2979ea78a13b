import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

export const REPO = path.resolve(import.meta.dirname, "../..");

export type ProductionBuild = {
  /** The build directory: `<out>/gateway/main.js` is the daemon, as `dist/gateway/main.js` after `npm run build`. */
  out: string;
  /** How long the build took (tsc, then the gateway's bundles). */
  ms: number;
  remove(): Promise<void>;
};

/**
 * `npm run build` into a directory of its own, so a run never races with a developer's dist/: tsc
 * (tsconfig.build.json), then the gateway daemon's and parkctl's bundles over their entry points
 * (scripts/build-gateway.mjs) and the operator console's assets (scripts/build-console.mjs). The directory is inside the repository, as dist/ is: the built modules find
 * the packages in its node_modules, the ES module type in its package.json, and the package root (version,
 * demo manifest) by walking up. The types are not checked (`--noCheck`): the emitted JavaScript is the
 * same, and `npm run typecheck` checks them.
 */
export async function buildProduction(): Promise<ProductionBuild> {
  const out = await mkdtemp(path.join(REPO, "dist-tmp-"));
  const started = performance.now();
  try {
    await run(
      process.execPath,
      [
        path.join(REPO, "node_modules/typescript/bin/tsc"),
        "-p",
        path.join(REPO, "tsconfig.build.json"),
        "--noCheck",
        "--outDir",
        out,
      ],
      { cwd: REPO },
    );
    for (const script of ["scripts/build-gateway.mjs", "scripts/build-console.mjs"])
      await run(process.execPath, [path.join(REPO, script), "--outdir", out], { cwd: REPO });
  } catch (err) {
    await rm(out, { recursive: true, force: true });
    const e = err as { stdout?: string; stderr?: string };
    throw new Error(`the production build failed:\n${e.stdout ?? ""}${e.stderr ?? ""}`);
  }
  return {
    out,
    ms: performance.now() - started,
    remove: () => rm(out, { recursive: true, force: true }),
  };
}
