/**
 * API benchmark: GET /location/v1/locations?include=resources over 100 locations × 20 devices, against a
 * bare Fastify route returning the same bytes, measured in the same run. The servers run in a child
 * process so the load generator does not share their event loop.
 *   npm run bench            (DURATION=10 seconds per measurement by default)
 */
import { printRuntime } from "./runtime.ts";
import { compareWithBare, DURATION, measure, withFixture } from "./support.ts";
import { timeBox } from "./time-box.ts";

printRuntime();

type Info = { api: number; bare: number; token: string; bytes: number };

const box = timeBox("bench:api");
await withFixture<Info>(box, "bench/locations-server.ts", async (info) => {
  const path = "/location/v1/locations?include=resources";
  console.log(
    `GET ${path}: 100 locations × 20 devices, ${info.bytes} bytes per response, ${DURATION} s per run`,
  );
  await compareWithBare(
    { url: `http://127.0.0.1:${info.api}${path}`, headers: { authorization: `Bearer ${info.token}` } },
    { url: `http://127.0.0.1:${info.bare}${path}`, headers: {} },
    "",
    box,
  );
  // A poller that sends back the list's ETag is answered 304 without the body while nothing changed.
  const url = `http://127.0.0.1:${info.api}${path}`;
  const authorization = `Bearer ${info.token}`;
  const etag = (await fetch(url, { headers: { authorization } })).headers.get("etag") ?? "";
  console.log("\nRevalidation (If-None-Match with the current ETag: 304, no body)");
  for (const connections of [1, 50]) {
    const r = await measure(
      { url, headers: { authorization, "if-none-match": etag }, status: 304 },
      connections,
      box,
    );
    console.log(
      `  ${String(connections).padStart(2)} connection${connections > 1 ? "s" : " "} ${r.rps.toFixed(0).padStart(7)} req/s   p50 ${r.p50} ms   p99 ${r.p99} ms`,
    );
  }
});
box.finished();
