/**
 * The top costs of a V8 CPU profile (node --cpu-prof): self time by function and by where the code
 * lives (a package, Node's internals, or one of the project's files), so the bench names where the
 * cloud's time goes without a profiler UI.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";

type ProfileNode = {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
};
type Profile = { nodes: ProfileNode[]; startTime: number; samples: number[]; timeDeltas: number[] };

/**
 * A span of the CLOCK_MONOTONIC clock in microseconds (`process.hrtime` in any process of the machine,
 * the clock V8 stamps its samples with on Linux).
 */
export type MonotonicSpan = { fromUs: number; toUs: number };

/** Where a frame's code lives: a package or one of the project's files; null for Node's and V8's own. */
function placeOf(url: string): string | null {
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return `package ${pkg[1]}`;
  const m = /\/(cloud|shared|gateway)\/(.+)$/.exec(url);
  return m ? `${m[1]}/${m[2]}` : null;
}

export function summarizeProfile(file: string, span?: MonotonicSpan, top = 12): string[] {
  const p = JSON.parse(readFileSync(file, "utf8")) as Profile;
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const selfUs = new Map<number, number>();
  let at = p.startTime;
  p.samples.forEach((id, k) => {
    const dt = p.timeDeltas[k] ?? 0;
    at += dt;
    if (span && (at < span.fromUs || at > span.toUs)) return;
    selfUs.set(id, (selfUs.get(id) ?? 0) + dt);
  });
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  // Node's internals and native calls (a socket's writev) are charged to the package or file calling them.
  const charged = (id: number): string => {
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const place = placeOf(byId.get(at)?.callFrame.url ?? "");
      if (place) return place;
    }
    return `(V8) ${byId.get(id)?.callFrame.functionName ?? "?"}`;
  };
  let total = 0;
  const byFunction = new Map<string, number>();
  const byPlace = new Map<string, number>();
  for (const [id, us] of selfUs) {
    const node = byId.get(id);
    if (!node) continue;
    const { functionName, url, lineNumber } = node.callFrame;
    if (functionName === "(idle)" || functionName === "(program)") continue;
    total += us;
    const where = placeOf(url)?.replace(/^package /, "") ?? (url.startsWith("node:") ? url : "");
    const name = `${functionName || "(anonymous)"}${where ? ` ${where}:${lineNumber + 1}` : ""}`;
    byFunction.set(name, (byFunction.get(name) ?? 0) + us);
    const place = charged(id);
    byPlace.set(place, (byPlace.get(place) ?? 0) + us);
  }
  const rows = (m: Map<string, number>) =>
    [...m]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([k, us]) => `    ${((100 * us) / total).toFixed(1).padStart(5)}%  ${k}`);
  return [
    `  busy ${(total / 1e6).toFixed(1)} s sampled (idle left out); by place (Node's own and native code charged to its caller):`,
    ...rows(byPlace),
    "  and by function (self time):",
    ...rows(byFunction),
  ];
}

/**
 * Prints the summary of the newest profile in `dir` (the cloud writes one when it exits), over `span`
 * only when given (the measured window), else over the process's whole life.
 */
export function printProfileSummary(dir: string, span?: MonotonicSpan): void {
  const files = readdirSync(dir)
    .filter((f) => f.endsWith(".cpuprofile"))
    .map((f) => path.join(dir, f))
    .sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs);
  const newest = files[0];
  if (!newest) return void console.log(`  profile   none written in ${dir}`);
  let lines = span ? summarizeProfile(newest, span) : [];
  const inWindow = lines.length > 0 && !lines[0]?.includes("busy 0.0 s");
  if (!inWindow) lines = summarizeProfile(newest);
  console.log(
    `  profile   ${newest}, ${inWindow ? "the measured window only" : "the whole life of the cloud process"}`,
  );
  for (const line of lines) console.log(line);
}
