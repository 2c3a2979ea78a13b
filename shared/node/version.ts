import { readFileSync } from "node:fs";
import { join } from "node:path";
import { PACKAGE_ROOT } from "./package-root.ts";

let version: string | undefined;

/**
 * The package's version (package.json), which every CLI and daemon prints for --version. Read on the first
 * call, not at import, so importing a module that may print it costs no file read.
 */
export function packageVersion(): string {
  version ??= (JSON.parse(readFileSync(join(PACKAGE_ROOT, "package.json"), "utf8")) as { version: string })
    .version;
  return version;
}
