import { readFileSync } from "node:fs";
import { isMap, isScalar, isSeq, LineCounter, type Node, parseDocument } from "yaml";
import { whyUnreadable } from "../../shared/node/unreadable-file.ts";
import { describePath, type ManifestPath, type RawProblem } from "./manifest-paths.ts";
import { findProblems, formatProblem, type ManifestProblem } from "./manifest-problems.ts";
import type { SiteManifest } from "./manifest-schema.ts";

type Env = Record<string, string | undefined>;

export type ManifestReport = {
  file: string;
  /** The validated manifest, or null when there is any problem. */
  manifest: SiteManifest | null;
  /** Every problem, in file order. */
  problems: ManifestProblem[];
  /** Set when the file itself could not be read (missing, a directory, no permission). */
  unreadable?: boolean;
};

/** A manifest that cannot be used; `problems` holds each one, the message all of them. */
export class ManifestError extends Error {
  constructor(
    readonly file: string,
    readonly problems: ManifestProblem[],
  ) {
    super(
      `${file} is not a valid site manifest (${count(problems.length)}):\n${problems
        .map((p) => `  ${formatProblem(file, p)}`)
        .join("\n")}`,
    );
    this.name = "ManifestError";
  }
}

const count = (n: number) => `${n} problem${n === 1 ? "" : "s"}`;

/**
 * Reads a YAML or JSON manifest and reports every problem at once, each with its file line. With `env`,
 * it also checks what applying needs from it (every `secret_env` variable set).
 */
export function readManifest(file: string, opts: { env?: Env } = {}): ManifestReport {
  let raw: string;
  try {
    raw = readFileSync(file, "utf8");
  } catch (err) {
    const why = whyUnreadable(err);
    return {
      file,
      manifest: null,
      problems: [{ line: null, where: "", key: "", message: `cannot read the file: ${why}` }],
      unreadable: true,
    };
  }
  const lines = new LineCounter();
  const doc = parseDocument(raw, { lineCounter: lines, prettyErrors: false, uniqueKeys: true });
  const lineAt = (offset: number) => lines.linePos(offset).line;
  const syntax: ManifestProblem[] = [];
  let data: unknown;
  if (file.endsWith(".json")) {
    try {
      data = JSON.parse(raw);
    } catch (err) {
      const m = (err as Error).message;
      const pos = /position (\d+)/.exec(m)?.[1];
      syntax.push({
        line: pos ? lineAt(Number(pos)) : null,
        where: "",
        key: "",
        message: `not valid JSON: ${m}`,
      });
    }
  } else {
    for (const e of doc.errors)
      syntax.push({ line: lineAt(e.pos[0]), where: "", key: "", message: `YAML: ${e.message}` });
    try {
      data = doc.toJS();
    } catch {
      data = undefined; // too broken to read further: the syntax errors say why
    }
  }
  if (syntax.length > 0 && data === undefined) return { file, manifest: null, problems: syntax };

  const { problems, manifest } = findProblems(data, opts.env);
  const positioned = doc.errors.length === 0 || !file.endsWith(".json");
  const located = problems.map((p) => locate(p, data, positioned ? doc.contents : null, lineAt));
  const all = [...syntax, ...located].sort((a, b) => (a.line ?? Infinity) - (b.line ?? Infinity));
  return { file, manifest: all.length === 0 ? manifest : null, problems: all };
}

/** Reads a manifest or throws a ManifestError listing every problem (used by the demo and the tests). */
export function loadManifest(file: string, env?: Env): SiteManifest {
  const report = readManifest(file, { env });
  if (!report.manifest) throw new ManifestError(file, report.problems);
  return report.manifest;
}

function locate(
  p: RawProblem,
  data: unknown,
  root: Node | null,
  lineAt: (offset: number) => number,
): ManifestProblem {
  const { where, key } = describePath(data, p.path);
  let message = p.message;
  if (p.related) {
    // "first at line 21", naming the first one too when it is another object (a gateway id in two places).
    const first = root ? offsetOf(root, p.related) : null;
    const firstWhere = describePath(data, p.related).where;
    const parts = [firstWhere !== where ? firstWhere : "", first === null ? "" : `line ${lineAt(first)}`];
    const at = parts.filter(Boolean).join(", ");
    if (at) message += ` (first at ${at})`;
  }
  const offset = root ? offsetOf(root, p.path) : null;
  return { line: offset === null ? null : lineAt(offset), where, key, message };
}

/**
 * Where in the text a path is: its value, or for a key the value does not have (a missing key, an unknown
 * key) the key itself or the nearest enclosing object that exists.
 */
function offsetOf(root: Node, path: ManifestPath): number | null {
  let node: Node = root;
  let best = node.range?.[0] ?? null;
  for (const seg of path) {
    if (isMap(node)) {
      const pair = node.items.find((it) => isScalar(it.key) && String(it.key.value) === String(seg));
      if (!pair) break;
      const keyNode = pair.key as Node;
      const value = pair.value as Node | null;
      // An unknown key or an empty value is best shown at the key.
      best = keyNode.range?.[0] ?? best;
      if (!value?.range) break;
      node = value;
      if (!(isMap(value) || isSeq(value))) best = value.range?.[0] ?? best;
    } else if (isSeq(node) && typeof seg === "number") {
      const item = node.items[seg] as Node | undefined;
      if (!item?.range) break;
      node = item;
      best = item.range[0];
    } else break;
  }
  return best;
}
