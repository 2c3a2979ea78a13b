import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * The directory holding the package's package.json: the repository, or /opt/parking on a controller. Found
 * by walking up from this module, which runs at shared/node/ as TypeScript and at dist/shared/node/ (or any other
 * build directory inside the package) as built JavaScript, so files read at run time — package.json, the
 * demo manifest, the demo's data directory — are found from both.
 */
export function findPackageRoot(from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, "package.json"))) return dir;
    if (dirname(dir) === dir) throw new Error(`no package.json above ${from}`);
  }
}

export const PACKAGE_ROOT: string = findPackageRoot(dirname(fileURLToPath(import.meta.url)));
