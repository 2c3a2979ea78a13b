/**
 * API benchmark: GET /session/v2/sessions?limit=100 (an S2S client, first page and a page deep in the list)
 * over 10,000 sessions, against a bare Fastify route returning the same bytes, measured in the same run.
 * The servers run in a child process so the load generator does not share their event loop.
 *   npm run bench:sessions            (DURATION=10 seconds per measurement by default)
 */
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import autocannon from "autocannon";

const DURATION = Number(process.env.DURATION ?? 10);

type Figures = { rps: number; p50: number; p99: number };

async function measure(url: string, headers: Record<string, string>, connections: number): Promise<Figures> {
  // A short warm-up lets the JIT settle before the measured run.
  // 30 s before a request counts as an error: on a loaded machine 50 queued lists can take over 10 s.
  await autocannon({ url, headers, connections, duration: 2, timeout: 30 });
  const r = await autocannon({ url, headers, connections, duration: DURATION, timeout: 30 });
  if (r.non2xx > 0 || r.errors > 0) throw new Error(`${url}: ${r.non2xx} non-2xx, ${r.errors} errors`);
  return { rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99 };
}

const child = spawn(process.execPath, ["--import", "tsx", "bench/sessions-server.ts"], {
  stdio: ["ignore", "pipe", "inherit"],
});
const line = await new Promise<string>((resolve) =>
  createInterface({ input: child.stdout }).once("line", resolve),
);
const info = JSON.parse(line) as {
  api: number;
  bare: number;
  token: string;
  bytes: number;
  sessions: number;
};
const auth = { authorization: `Bearer ${info.token}` };
const base = "/session/v2/sessions?limit=100";

/** The cursor of page 50 (sessions 4,901–5,000): how a page deep in the list performs. */
async function deepPage(): Promise<string> {
  let url = base;
  for (let page = 1; page < 50; page++) {
    const res = await fetch(`http://127.0.0.1:${info.api}${url}`, { headers: auth });
    const token = ((await res.json()) as { pagination_token: string }).pagination_token;
    url = `${base}&pagination_token=${encodeURIComponent(token)}`;
  }
  return url;
}

try {
  console.log(
    `GET ${base}: ${info.sessions} sessions, ${info.bytes} bytes per response, ${DURATION} s per run`,
  );
  const pages = [
    ["first page", base],
    ["page 50", await deepPage()],
  ] as const;
  for (const [name, path] of pages) {
    for (const connections of [1, 50]) {
      const api = await measure(`http://127.0.0.1:${info.api}${path}`, auth, connections);
      // The bare route answers the first page's bytes: every page of 100 ended sessions is the same size.
      const bare = await measure(`http://127.0.0.1:${info.bare}/session/v2/sessions`, {}, connections);
      console.log(`\n${name}, ${connections} connection${connections > 1 ? "s" : ""}`);
      console.log(
        `  service    ${api.rps.toFixed(0).padStart(7)} req/s   p50 ${api.p50} ms   p99 ${api.p99} ms`,
      );
      console.log(
        `  bare route ${bare.rps.toFixed(0).padStart(7)} req/s   p50 ${bare.p50} ms   p99 ${bare.p99} ms`,
      );
      console.log(
        `  ratio      throughput ${(api.rps / bare.rps).toFixed(2)}×   p99 ${(api.p99 / Math.max(bare.p99, 1)).toFixed(1)}× of the bare route`,
      );
    }
  }
} finally {
  child.kill("SIGTERM");
}
