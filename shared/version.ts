import { readFileSync } from "node:fs";

/** The package's version (package.json), which every CLI and daemon prints for --version. */
export const PACKAGE_VERSION: string = (
  JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version: string }
).version;
