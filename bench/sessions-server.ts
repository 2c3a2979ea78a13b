/**
 * Benchmark fixture process: the real cloud app on SQLite with 10,000 ended sessions (100 riders × 100, each
 * with its start and end events and a payment) at one location, and beside it a bare Fastify route
 * returning the same bytes. Prints {api, bare, token, bytes, sessions} as JSON.
 */
import { randomUUID } from "node:crypto";
import { hashSecret } from "../cloud/auth/secrets.ts";
import { derivedId } from "../cloud/manifest/apply-manifest.ts";
import type {
  PaymentsTable,
  SessionEventsTable,
  SessionsTable,
} from "../cloud/store/tables/session-tables.ts";
import { announce, benchDb, declareOperator, lockers, serveListing } from "./support.ts";

const OPERATOR = "cccccccc-0000-4000-8000-000000000003";
const RIDERS = 100;
const SESSIONS_PER_RIDER = 100;
const DEVICES = 20;
const CHUNK = 250;

const { db } = await benchDb();
const hash = await hashSecret("bench-secret");
await declareOperator(db, {
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
      gateways: [{ id: "gw-bench", secret_hash: hash, devices: lockers(DEVICES) }],
    },
  ],
});
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
    access_key_id: null,
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

const { api, bare, token, sample } = await serveListing(db, "/session/v2/sessions?limit=100");
if (sample.statusCode !== 200 || (sample.json() as { data: unknown[] }).data.length !== 100)
  throw new Error(`sessions list: ${sample.statusCode} ${sample.body.slice(0, 200)}`);

announce({ api, bare, token, bytes: Buffer.byteLength(sample.body), sessions: sessions.length });
