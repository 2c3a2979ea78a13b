/**
 * Sign-in throughput: POST /external-users-auth/v1/sign-in for 1,000 riders (random order), each a
 * round trip to a local stand-in for the operator's verification endpoint, against a bare Fastify route
 * making the same outbound call. Both servers run in a child process so the load generator does not share
 * their event loop.
 *   npm run bench:sign-in     (DURATION=10 seconds per measurement by default)
 */
import type autocannon from "autocannon";
import { printRuntime } from "./runtime.ts";
import { compareWithBare, DURATION, type Target, withFixture } from "./support.ts";
import { timeBox } from "./time-box.ts";

printRuntime();

const PATH = "/external-users-auth/v1/sign-in";

type Info = { api: number; bare: number; operatorId: string; riders: number };

const box = timeBox("bench:sign-in");
await withFixture<Info>(box, "bench/sign-in-servers.ts", async (info) => {
  /** Sign-ins of random riders at the server on `port`. */
  const signIns = (port: number): Target => ({
    url: `http://127.0.0.1:${port}${PATH}`,
    label: `port ${port}`,
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
  });

  console.log(`POST ${PATH}: ${info.riders} riders, one verification callback each, ${DURATION} s per run`);
  await compareWithBare(signIns(info.api), signIns(info.bare), "", box);
});
box.finished();
