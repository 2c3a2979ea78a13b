/**
 * Benchmark fixture process: the real cloud app on SQLite with 100 locations × 20 devices (all online),
 * and beside it a bare Fastify route returning the same bytes. Prints {api, bare, token} as JSON.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import Fastify from "fastify";
import pino from "pino";
import { buildApp } from "../cloud/app.ts";
import { hashSecret } from "../cloud/auth/secrets.ts";
import { DEFAULT_COMMAND_TIMEOUTS } from "../cloud/commands/timeouts.ts";
import { applyManifest } from "../cloud/manifest/apply-manifest.ts";
import { SiteManifest } from "../cloud/manifest/manifest-schema.ts";
import { openDb } from "../cloud/store/db.ts";
import { systemClock } from "../shared/clock.ts";

const LOCATIONS = 100;
const DEVICES_PER_LOCATION = 20; // 1 GUARD + 19 lockers

const dir = mkdtempSync(path.join(tmpdir(), "parking-bench-"));
const db = await openDb({ kind: "sqlite", file: path.join(dir, "cloud.db") });
const hash = await hashSecret("bench-secret");
const manifest = SiteManifest.parse({
  version: 1,
  operators: [
    {
      id: "cccccccc-0000-4000-8000-000000000003",
      name: "Bench operator",
      clients: [{ client_id: "bench", secret_hash: hash, permissions: ["RESTRICTED_FIELDS"] }],
      locations: Array.from({ length: LOCATIONS }, (_, i) => ({
        code: `B${String(i).padStart(3, "0")}`,
        label: `Bench location ${i}`,
        type: "BIKE_LOCKERS",
        latitude: 52 + i / 1000,
        longitude: 4 + i / 1000,
        tags: ["bench"],
        gateways: [
          {
            id: `gw-bench-${i}`,
            secret_hash: hash,
            devices: Array.from({ length: DEVICES_PER_LOCATION - 1 }, (_, d) => ({
              alias: String(d + 1),
              type: "LOCKER",
            })),
          },
        ],
      })),
    },
  ],
});
await applyManifest(db, manifest, systemClock);
await db
  .updateTable("devices")
  .set({ last_seen_at: new Date(Date.now() + 3_600_000).toISOString() })
  .execute();

const app = await buildApp({
  db,
  clock: systemClock,
  log: pino({ level: "silent" }),
  gateways: { publishCommand: () => Promise.resolve(), ack: () => Promise.resolve() },
  tokenSecret: new TextEncoder().encode("bench-token-secret-of-at-least-32-bytes"),
  issuer: "http://bench",
  timeouts: DEFAULT_COMMAND_TIMEOUTS,
});
await app.listen({ host: "127.0.0.1", port: 0 });
const apiPort = (app.server.address() as { port: number }).port;
const tokenRes = await app.inject({
  method: "POST",
  url: "/oauth2/token",
  headers: { "content-type": "application/x-www-form-urlencoded" },
  payload: "grant_type=client_credentials&client_id=bench&client_secret=bench-secret",
});
const token = (tokenRes.json() as { access_token: string }).access_token;
const sample = await app.inject({
  method: "GET",
  url: "/location/v1/locations?include=resources",
  headers: { authorization: `Bearer ${token}` },
});

const bare = Fastify();
const bytes = sample.body;
bare.get("/location/v1/locations", (_req, reply) =>
  reply.type("application/json; charset=utf-8").send(bytes),
);
await bare.listen({ host: "127.0.0.1", port: 0 });
const barePort = (bare.server.address() as { port: number }).port;

process.stdout.write(
  `${JSON.stringify({ api: apiPort, bare: barePort, token, bytes: Buffer.byteLength(bytes) })}\n`,
);
process.on("SIGTERM", () => process.exit(0));
