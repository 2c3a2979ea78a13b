/**
 * Sign-in throughput: POST /external-users-auth/v1/sign-in for 1,000 riders (random order), each a
 * round trip to a local stand-in for the operator's verification endpoint, against a bare Fastify route
 * making the same outbound call. Both servers run in a child process so the load generator does not share
 * their event loop.
 *   npm run bench:sign-in     (DURATION=10 seconds per measurement by default)
 */
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import autocannon from "autocannon";

const DURATION = Number(process.env.DURATION ?? 10);
const PATH = "/external-users-auth/v1/sign-in";

type Figures = { rps: number; p50: number; p99: number };

const child = spawn(process.execPath, ["--import", "tsx", "bench/sign-in-servers.ts"], {
  stdio: ["ignore", "pipe", "inherit"],
});
const line = await new Promise<string>((resolve) =>
  createInterface({ input: child.stdout }).once("line", resolve),
);
const info = JSON.parse(line) as { api: number; bare: number; operatorId: string; riders: number };

async function measure(port: number, connections: number): Promise<Figures> {
  const opts = {
    url: `http://127.0.0.1:${port}${PATH}`,
    connections,
    requests: [
      {
        method: "POST" as const,
        headers: { "content-type": "application/json" },
        setupRequest: (req: autocannon.Request) => {
          const n = Math.floor(Math.random() * info.riders);
          const id = `dddddddd-0000-4000-8000-${String(n).padStart(12, "0")}`;
          return {
            ...req,
            body: JSON.stringify({ service_user_id: id, operator_id: info.operatorId, challenge_token: "c" }),
          };
        },
      },
    ],
  };
  // A short warm-up lets the JIT settle before the measured run.
  await autocannon({ ...opts, duration: 2 });
  const r = await autocannon({ ...opts, duration: DURATION });
  if (r.non2xx > 0 || r.errors > 0) throw new Error(`port ${port}: ${r.non2xx} non-2xx, ${r.errors} errors`);
  return { rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99 };
}

try {
  console.log(`POST ${PATH}: ${info.riders} riders, one verification callback each, ${DURATION} s per run`);
  for (const connections of [1, 50]) {
    const api = await measure(info.api, connections);
    const bare = await measure(info.bare, connections);
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
