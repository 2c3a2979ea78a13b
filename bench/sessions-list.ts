/**
 * API benchmark: GET /session/v2/sessions?limit=100 (an S2S client, first page and a page deep in the list)
 * over 10,000 sessions, measured in the same run against two bare Fastify routes: one running the same
 * statements on the same database and answering the rows as they come (the floor the target is set
 * against), and one returning the same bytes (what an answer costs on the wire alone).
 * The servers run in a child process so the load generator does not share their event loop.
 *   npm run bench:sessions            (DURATION=10 seconds per measurement by default)
 */
import { printRuntime } from "./runtime.ts";
import { DURATION, type Figures, measure, withFixture } from "./support.ts";
import { timeBox } from "./time-box.ts";

printRuntime();

type Info = { api: number; bare: number; queries: number; token: string; bytes: number; sessions: number };

const line = (name: string, f: Figures) =>
  `  ${name.padEnd(12)} ${f.rps.toFixed(0).padStart(7)} req/s   p50 ${f.p50} ms   p99 ${f.p99} ms`;

const box = timeBox("bench:sessions");
await withFixture<Info>(box, "bench/sessions-server.ts", async (info) => {
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

  console.log(
    `GET ${base}: ${info.sessions} sessions, ${info.bytes} bytes per response, ${DURATION} s per run`,
  );
  box.step("finding page 50");
  const pages = [
    ["first page", base],
    ["page 50", await deepPage()],
  ] as const;
  for (const [name, path] of pages) {
    for (const connections of [1, 50]) {
      // 30 s before a request counts as an error: on a loaded machine 50 queued lists can take over 10 s.
      const at = (port: number, headers: Record<string, string>) => ({
        url: `http://127.0.0.1:${port}${path}`,
        headers,
        timeout: 30,
      });
      const api = await measure(at(info.api, auth), connections, box);
      const queries = await measure(at(info.queries, {}), connections, box);
      // The bytes route answers the first page's bytes: every page of 100 ended sessions is the same size.
      const bytes = await measure(
        { ...at(info.bare, {}), url: `http://127.0.0.1:${info.bare}/session/v2/sessions` },
        connections,
        box,
      );
      console.log(`\n${name}, ${connections} connection${connections > 1 ? "s" : ""}`);
      console.log(line("service", api));
      console.log(line("same queries", queries));
      console.log(line("same bytes", bytes));
      console.log(
        `  ratio        throughput ${(api.rps / queries.rps).toFixed(2)}×   p99 ${(api.p99 / Math.max(queries.p99, 1)).toFixed(1)}× of the same-query route`,
      );
      console.log(`               ${(api.rps / bytes.rps).toFixed(2)}× of the bytes route`);
    }
  }
});
box.finished();
