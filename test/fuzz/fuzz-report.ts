import type { FuzzStats } from "./fuzz-target.ts";

/** The figures of a run, as printed by `npm run fuzz` (and quoted in the README). */
export function formatFigures(
  stats: FuzzStats,
  elapsedMs: number,
  meta: { seed: number; db: string },
): string {
  const seconds = elapsedMs / 1000;
  const histogram = [...stats.statuses.entries()]
    .sort(([a], [b]) => a - b)
    .map(([status, n]) => `${status}: ${n}`)
    .join(", ");
  const destinations = [...stats.byDestination.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(
      ([label, d]) =>
        `  ${label.padEnd(58)} ${String(d.sent).padStart(7)} sent ${String(d.ok).padStart(7)} 2xx`,
    );
  const v = stats.violations;
  return [
    `seed ${meta.seed}, store ${meta.db}`,
    `requests sent:          ${stats.sent} (${stats.byTransport.inject} in-process, ${stats.byTransport.socket} over a socket)`,
    `time:                   ${seconds.toFixed(1)} s (${Math.round(stats.sent / seconds)} requests/s)`,
    `statuses:               ${histogram}`,
    "by destination:",
    ...destinations,
    `5xx:                    ${v["5xx"]}`,
    `envelope violations:    ${v.envelope}`,
    `undocumented statuses:  ${v["undocumented status"]}`,
    `no answer:              ${v["no answer"]}`,
  ].join("\n");
}

export function violationCount(stats: FuzzStats): number {
  return Object.values(stats.violations).reduce((a, b) => a + b, 0);
}
