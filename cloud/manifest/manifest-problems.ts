/**
 * Everything wrong with a site manifest, found in one pass and told the way its author wrote it: the file
 * line, the object by its name (operator, client, public area, location code, gateway id, device alias)
 * rather than its index, the key, and for a misspelt key or value the one probably meant. Schema problems,
 * cross-references (duplicates, unknown location codes) and what `apply` needs from the environment
 * (`secret_env` variables) are all reported together.
 */
import { fromIssue, unknownKeys } from "./manifest-key-problems.ts";
import type { RawProblem } from "./manifest-paths.ts";
import { crossReferences } from "./manifest-references.ts";
import { SiteManifest } from "./manifest-schema.ts";
import { missingSecrets } from "./manifest-secret-problems.ts";

type Env = Record<string, string | undefined>;

/** A problem as people read it: `file:line: where: key: message`. */
export type ManifestProblem = {
  /** 1-based line in the file, when known. */
  line: number | null;
  /** The object, by name: `location CS-L › gateway gw-cs-lockers › device "4"`; "" for the top level. */
  where: string;
  /** The key within that object: `bus.channel`, `secret_env`; "" for the object itself. */
  key: string;
  message: string;
};

/** Every problem of the parsed data: schema, unknown keys, cross-references and, with `env`, secrets. */
export function findProblems(
  data: unknown,
  env?: Env,
): { problems: RawProblem[]; manifest: SiteManifest | null } {
  const problems: RawProblem[] = [];
  const checkedObjects = new Set<string>();
  problems.push(...unknownKeys(data, checkedObjects));
  const parsed = SiteManifest.safeParse(data);
  if (!parsed.success)
    for (const issue of parsed.error.issues) problems.push(...fromIssue(issue, data, checkedObjects));
  problems.push(...crossReferences(data));
  if (env) problems.push(...missingSecrets(data, env));
  return { problems, manifest: parsed.success && problems.length === 0 ? parsed.data : null };
}

export function formatProblem(file: string, p: ManifestProblem): string {
  const at = p.line === null ? file : `${file}:${p.line}`;
  const subject = [p.where, p.key].filter(Boolean).join(": ");
  return `${at}: ${subject ? `${subject}: ` : ""}${p.message}`;
}
