/**
 * Benchmark fixture process: the real cloud app on SQLite with 10,000 ended sessions (100 riders × 100, each
 * with its start and end events and a payment) at one location, and beside it two bare Fastify routes: one
 * returning the same bytes, one running the same statements on the same database and answering the rows
 * as they come. Prints {api, bare, queries, bytes, sessions, token} as JSON.
 */
import { randomUUID } from "node:crypto";
import Fastify from "fastify";
import { CompiledQuery } from "kysely";
import { hashSecret } from "../cloud/auth/secrets.ts";
import { derivedId } from "../cloud/manifest/apply-manifest.ts";
import type {
  PaymentsTable,
  SessionEventsTable,
  SessionsTable,
} from "../cloud/store/tables/session-tables.ts";
import { announce, benchDb, declareOperator, listen, lockers, serveListing } from "./support.ts";

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

const PENDING_LIFETIME_MS = 30 * 24 * 3_600_000;
// The statements the service runs for a page, word for word: the page (one more row than asked, to know
// whether a next page exists) with its payments, by the keyset index; then the events of the page's rows.
const PAGE = `select "s".*, "p"."id" as "payment_id", "p"."status" as "payment_status" from "sessions" as "s" left join "payments" as "p" on "p"."session_id" = "s"."id" where "s"."operator_id" = ? and ("s"."status" != ? or "s"."created_at" > ?)`;
const AFTER = ` and ("s"."created_at" < ? or ("s"."created_at" = ? and "s"."id" < ?))`;
const ORDER = ` order by "s"."created_at" desc, "s"."id" desc limit ?`;
const eventsSql = (n: number) =>
  `select * from "session_events" where "session_id" in (${Array(n).fill("?").join(", ")}) order by "session_id", "seq"`;

/**
 * The same-query floor: the service's statements on the same database handle (so the same driver and
 * prepared-statement cache), with the rows answered as JSON as they come, unpresented. It reads the
 * cursor out of the service's pagination_token without checking it, and authenticates nobody.
 */
const same = Fastify();
same.get<{ Querystring: { limit?: string; pagination_token?: string } }>(
  "/session/v2/sessions",
  async (req, reply) => {
    const limit = Number(req.query.limit ?? 50);
    const pendingAfter = new Date(Date.now() - PENDING_LIFETIME_MS).toISOString();
    const token = req.query.pagination_token;
    const after = token
      ? (JSON.parse(Buffer.from(token, "base64url").toString("utf8")) as { c: string; i: string })
      : null;
    const pageQuery = after
      ? CompiledQuery.raw(PAGE + AFTER + ORDER, [
          OPERATOR,
          "pending",
          pendingAfter,
          after.c,
          after.c,
          after.i,
          limit + 1,
        ])
      : CompiledQuery.raw(PAGE + ORDER, [OPERATOR, "pending", pendingAfter, limit + 1]);
    const rows = (await db.executeQuery<{ id: string }>(pageQuery)).rows;
    const ids = rows.slice(0, limit).map((r) => r.id);
    const evs = (await db.executeQuery(CompiledQuery.raw(eventsSql(ids.length), ids))).rows;
    return reply.type("application/json; charset=utf-8").send(JSON.stringify({ rows, events: evs }));
  },
);

// The floor reads the very page the service answers.
const floor = (await same.inject({ url: "/session/v2/sessions?limit=100" })).json() as {
  rows: { id: string }[];
};
const served = (sample.json() as { data: { id: string }[] }).data.map((s) => s.id).join();
if (
  floor.rows
    .slice(0, 100)
    .map((r) => r.id)
    .join() !== served
)
  throw new Error("the same-query route reads another page than the service answers");

announce({
  api,
  bare,
  queries: await listen(same),
  token,
  bytes: Buffer.byteLength(sample.body),
  sessions: sessions.length,
});
