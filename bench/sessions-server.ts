/**
 * Benchmark fixture process: the real cloud app on SQLite with 10,000 ended sessions (100 riders × 100, each
 * with its start and end events and a payment) at one location, and beside it a bare Fastify route
 * returning the same bytes. Prints {api, bare, token, bytes, sessions} as JSON.
 */
import { randomUUID } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import Fastify from "fastify";
import pino from "pino";
import { buildApp } from "../cloud/app.ts";
import { hashSecret } from "../cloud/auth/secrets.ts";
import { DEFAULT_COMMAND_TIMEOUTS } from "../cloud/commands/timeouts.ts";
import { applyManifest, derivedId } from "../cloud/manifest/apply-manifest.ts";
import { SiteManifest } from "../cloud/manifest/manifest-schema.ts";
import type { PaymentsTable, SessionEventsTable, SessionsTable } from "../cloud/sessions/session-tables.ts";
import { openDb } from "../cloud/store/db.ts";
import { systemClock } from "../shared/clock.ts";

const OPERATOR = "cccccccc-0000-4000-8000-000000000003";
const RIDERS = 100;
const SESSIONS_PER_RIDER = 100;
const DEVICES = 20;
const CHUNK = 250;

const dir = mkdtempSync(path.join(tmpdir(), "parking-bench-"));
const db = await openDb({ kind: "sqlite", file: path.join(dir, "cloud.db") });
const hash = await hashSecret("bench-secret");
await applyManifest(
  db,
  SiteManifest.parse({
    version: 1,
    operators: [
      {
        id: OPERATOR,
        name: "Bench operator",
        clients: [{ client_id: "bench", secret_hash: hash, permissions: [] }],
        price_lists: [{ code: "std", name: "Standard", currency: "EUR", price_per_period: "2.00" }],
        locations: [
          {
            code: "S1",
            label: "Bench lockers",
            type: "BIKE_LOCKERS",
            latitude: 52,
            longitude: 4,
            price_list: "std",
            gateways: [
              {
                id: "gw-bench",
                secret_hash: hash,
                devices: Array.from({ length: DEVICES }, (_, d) => ({
                  alias: String(d + 1),
                  type: "LOCKER",
                })),
              },
            ],
          },
        ],
      },
    ],
  }),
  systemClock,
);
const locationId = derivedId(OPERATOR, "location", "S1");
const deviceIds = Array.from({ length: DEVICES }, (_, d) => derivedId(locationId, "device", String(d + 1)));
const riders = Array.from({ length: RIDERS }, () => randomUUID());

// Ended sessions of the last 100 days, one every few minutes, written in bulk as the recorder writes them.
const sessions: SessionsTable[] = [];
const events: SessionEventsTable[] = [];
const payments: PaymentsTable[] = [];
const t0 = Date.now() - 100 * 24 * 3_600_000;
for (let i = 0; i < RIDERS * SESSIONS_PER_RIDER; i++) {
  const id = randomUUID();
  const start = new Date(t0 + i * 8 * 60_000).toISOString();
  const end = new Date(t0 + i * 8 * 60_000 + 75 * 60_000).toISOString();
  sessions.push({
    id,
    operator_id: OPERATOR,
    user_id: riders[i % RIDERS] as string,
    location_id: locationId,
    device_id: deviceIds[i % DEVICES] as string,
    price_list_id: derivedId(OPERATOR, "price-list", "std"),
    status: "ended",
    status_at: end,
    booked_time: null,
    booked_until_time: null,
    start_time: start,
    end_time: end,
    command_id: null,
    ended_by: "unlock",
    fee_currency: "EUR",
    fee_value: "4.00",
    created_at: start,
    updated_at: end,
  });
  events.push(
    { session_id: id, seq: 1, name: "start", occurred_at: start, booked_until: null },
    { session_id: id, seq: 2, name: "end", occurred_at: end, booked_until: null },
  );
  payments.push({
    id: randomUUID(),
    operator_id: OPERATOR,
    session_id: id,
    provider: "builtin",
    status: "PENDING",
    created_at: end,
    updated_at: end,
  });
}
await db.transaction().execute(async (trx) => {
  for (let i = 0; i < sessions.length; i += CHUNK) {
    await trx
      .insertInto("sessions")
      .values(sessions.slice(i, i + CHUNK))
      .execute();
    await trx
      .insertInto("payments")
      .values(payments.slice(i, i + CHUNK))
      .execute();
  }
  for (let i = 0; i < events.length; i += CHUNK)
    await trx
      .insertInto("session_events")
      .values(events.slice(i, i + CHUNK))
      .execute();
});

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
  url: "/session/v2/sessions?limit=100",
  headers: { authorization: `Bearer ${token}` },
});
if (sample.statusCode !== 200 || (sample.json() as { data: unknown[] }).data.length !== 100)
  throw new Error(`sessions list: ${sample.statusCode} ${sample.body.slice(0, 200)}`);

const bare = Fastify();
const bytes = sample.body;
bare.get("/session/v2/sessions", (_req, reply) => reply.type("application/json; charset=utf-8").send(bytes));
await bare.listen({ host: "127.0.0.1", port: 0 });
const barePort = (bare.server.address() as { port: number }).port;

process.stdout.write(
  `${JSON.stringify({ api: apiPort, bare: barePort, token, bytes: Buffer.byteLength(bytes), sessions: sessions.length })}\n`,
);
process.on("SIGTERM", () => process.exit(0));
