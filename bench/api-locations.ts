/**
 * API benchmark: GET /location/v1/locations?include=resources over 100 locations × 20 devices, against a
 * bare Fastify route returning the same bytes, measured in the same run. The servers run in a child
 * process so the load generator does not share their event loop.
 *   npm run bench            (DURATION=10 seconds per measurement by default)
 */
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import autocannon from "autocannon";

const DURATION = Number(process.env.DURATION ?? 10);

type Figures = { rps: number; p50: number; p99: number };

async function measure(url: string, headers: Record<string, string>, connections: number): Promise<Figures> {
  // A short warm-up lets the JIT settle before the measured run.
  await autocannon({ url, headers, connections, duration: 2 });
  const r = await autocannon({ url, headers, connections, duration: DURATION });
  if (r.non2xx > 0 || r.errors > 0) throw new Error(`${url}: ${r.non2xx} non-2xx, ${r.errors} errors`);
  return { rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99 };
}

const child = spawn(process.execPath, ["--import", "tsx", "bench/locations-server.ts"], {
  stdio: ["ignore", "pipe", "inherit"],
});
const line = await new Promise<string>((resolve) =>
  createInterface({ input: child.stdout }).once("line", resolve),
);
const info = JSON.parse(line) as { api: number; bare: number; token: string; bytes: number };
const path = "/location/v1/locations?include=resources";
const auth = { authorization: `Bearer ${info.token}` };

try {
  console.log(
    `GET ${path}: 100 locations × 20 devices, ${info.bytes} bytes per response, ${DURATION} s per run`,
  );
  for (const connections of [1, 50]) {
    const api = await measure(`http://127.0.0.1:${info.api}${path}`, auth, connections);
    const bare = await measure(`http://127.0.0.1:${info.bare}${path}`, {}, connections);
    console.log(`\n${connections} connection${connections > 1 ? "s" : ""}`);
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
} finally {
  child.kill("SIGTERM");
}
