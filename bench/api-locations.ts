/**
 * API benchmark: GET /location/v1/locations?include=resources over 100 locations × 20 devices, against a
 * bare Fastify route returning the same bytes, measured in the same run. The servers run in a child
 * process so the load generator does not share their event loop.
 *   npm run bench            (DURATION=10 seconds per measurement by default)
 */
import { printRuntime } from "./runtime.ts";
import { compareWithBare, DURATION, withFixture } from "./support.ts";
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
});
box.finished();
