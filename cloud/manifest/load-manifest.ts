import { readFileSync } from "node:fs";
import { parse as parseYaml } from "yaml";
import { SiteManifest } from "./manifest-schema.ts";

/** Reads a YAML or JSON manifest; a bad one fails with every problem listed by path. */
export function loadManifest(file: string): SiteManifest {
  const raw = readFileSync(file, "utf8");
  const data: unknown = file.endsWith(".json") ? JSON.parse(raw) : parseYaml(raw);
  const parsed = SiteManifest.safeParse(data);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join(".") || "(root)"}: ${i.message}`);
    throw new Error(`${file} is not a valid site manifest:\n${lines.join("\n")}`);
  }
  return parsed.data;
}
