/**
 * API benchmark: GET /session/v2/sessions?limit=100 (an S2S client, first page and a page deep in the list)
 * over 10,000 sessions, against a bare Fastify route returning the same bytes, measured in the same run.
 * The servers run in a child process so the load generator does not share their event loop.
 *   npm run bench:sessions            (DURATION=10 seconds per measurement by default)
 */
import { printRuntime } from "./runtime.ts";
import { compareWithBare, DURATION, withFixture } from "./support.ts";
import { timeBox } from "./time-box.ts";

printRuntime();

type Info = { api: number; bare: number; token: string; bytes: number; sessions: number };

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
    // 30 s before a request counts as an error: on a loaded machine 50 queued lists can take over 10 s.
    // The bare route answers the first page's bytes: every page of 100 ended sessions is the same size.
    await compareWithBare(
      { url: `http://127.0.0.1:${info.api}${path}`, headers: auth, timeout: 30 },
      { url: `http://127.0.0.1:${info.bare}/session/v2/sessions`, headers: {}, timeout: 30 },
      `${name}, `,
      box,
    );
  }
});
box.finished();
