import { readFileSync } from "node:fs";
import { builtinModules } from "node:module";
import { build } from "esbuild";
import { describe, expect, it } from "vitest";

const pkg = JSON.parse(readFileSync("package.json", "utf8")) as {
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
};

/** The package a bare import names: "@scope/name/sub" → "@scope/name", "name/sub" → "name". */
const packageOf = (spec: string) =>
  spec
    .split("/")
    .slice(0, spec.startsWith("@") ? 2 : 1)
    .join("/");

/** Every package a program imports, following its own modules (the packages themselves stay external). */
async function packagesImportedBy(entry: string): Promise<string[]> {
  const result = await build({
    entryPoints: [entry],
    bundle: true,
    write: false,
    metafile: true,
    platform: "node",
    format: "esm",
    packages: "external",
    logLevel: "silent",
  });
  const names = new Set<string>();
  for (const input of Object.values(result.metafile.inputs))
    for (const imp of input.imports) if (imp.external && !imp.path.startsWith(".")) names.add(imp.path);
  const builtins = new Set(builtinModules);
  return [...names].filter((n) => !n.startsWith("node:") && !builtins.has(n)).map(packageOf);
}

/**
 * A controller or a server builds and then prunes to its runtime dependencies (`npm prune --omit=dev`,
 * systemd/README.md): whatever the daemons and the CLIs import must be a runtime dependency, never a dev one.
 */
describe("what production runs needs only runtime dependencies", () => {
  it.each([
    "gateway/main.ts",
    "gateway/cli/parkctl.ts",
    "cloud/main.ts",
    "cloud/manifest/cli.ts",
    "cloud/operator/cli.ts",
    "hardware-sim/main.ts",
    "demo/main.ts",
  ])("%s", async (entry) => {
    const used = await packagesImportedBy(entry);
    expect(used.length).toBeGreaterThan(0);
    const missing = used.filter((p) => !(p in pkg.dependencies));
    expect(missing, `${entry} imports packages that npm ci --omit=dev leaves out`).toEqual([]);
  });

  it("tsx, which `npm start` runs the demo with, is a runtime dependency (the units run the build)", () => {
    expect(pkg.dependencies).toHaveProperty("tsx");
  });
});
