/**
 * Benchmark fixture process for bench/sign-in.ts: a stand-in for the operator's sign-in verification
 * endpoint (always confirms the rider), the real cloud app on SQLite whose operator calls it back, and a
 * bare Fastify route making the same outbound call (one undici POST, the JSON answer read) and answering
 * fixed tokens. Prints {verifier, api, bare, operatorId, riders} as JSON.
 */
import { randomBytes } from "node:crypto";
import { once } from "node:events";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import Fastify from "fastify";
import { Agent, request } from "undici";
import { announce, benchDb, declareOperator, listen, startCloud } from "./support.ts";

const OPERATOR = "cccccccc-0000-4000-8000-000000000003";
const RIDERS = 1_000;
const riderId = (i: number) => `dddddddd-0000-4000-8000-${String(i).padStart(12, "0")}`;

// The operator's server: confirms whoever asks (the rider's id is the user_id's suffix).
const verifier = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on("data", (c: Buffer) => chunks.push(c));
  req.on("end", () => {
    const { user_id } = JSON.parse(Buffer.concat(chunks).toString()) as { user_id: string };
    const body = JSON.stringify({ service_user_id: riderId(Number(user_id.slice(6))) });
    res.writeHead(200, { "content-type": "application/json" }).end(body);
  });
});
verifier.listen(0, "127.0.0.1");
await once(verifier, "listening");
const verifierUrl = `http://127.0.0.1:${(verifier.address() as AddressInfo).port}`;

const { db } = await benchDb("parking-bench-sign-in-");
await declareOperator(db, {
  id: OPERATOR,
  name: "Bench operator",
  external_users: {
    sign_up_url: `${verifierUrl}/sign-up`,
    sign_in_url: `${verifierUrl}/sign-in`,
    allow_private_addresses: true,
    secret: `whsec_${randomBytes(32).toString("base64")}`,
  },
  riders: Array.from({ length: RIDERS }, (_, i) => ({
    user_id: `rider-${i}`,
    service_user_id: riderId(i),
  })),
});
const unlimited = { burst: 1e9, perMinute: 1e9 };
const { port: apiPort } = await startCloud(db, {
  externalUsers: {
    rateLimits: {
      signUp: { perOperator: unlimited, perAddress: unlimited },
      signIn: { perOperator: unlimited, perAddress: unlimited },
    },
  },
});

// The floor: the same outbound call from a bare route, nothing stored, fixed tokens.
const agent = new Agent({ connections: 64 });
const bare = Fastify();
bare.post("/external-users-auth/v1/sign-in", async (req) => {
  const body = req.body as { service_user_id: string; challenge_token: string };
  const n = Number(body.service_user_id.slice(-12));
  const res = await request(`${verifierUrl}/sign-in`, {
    method: "POST",
    dispatcher: agent,
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ user_id: `rider-${n}`, challenge_token: body.challenge_token }),
  });
  const answer = (await res.body.json()) as { service_user_id: string };
  if (answer.service_user_id !== body.service_user_id) throw new Error("mismatch");
  return { access_token: "a", refresh_token: "r" };
});
const barePort = await listen(bare);

announce({ api: apiPort, bare: barePort, operatorId: OPERATOR, riders: RIDERS });
process.on("SIGINT", () => process.exit(0));
