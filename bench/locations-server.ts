/**
 * Benchmark fixture process: the real cloud app on SQLite with 100 locations × 20 devices (all online),
 * and beside it a bare Fastify route returning the same bytes. Prints {api, bare, token} as JSON.
 */
import { hashSecret } from "../cloud/auth/secrets.ts";
import { announce, benchDb, declareOperator, lockers, serveListing } from "./support.ts";

const LOCATIONS = 100;
const DEVICES_PER_LOCATION = 20; // 1 GUARD + 19 lockers

const { db } = await benchDb();
const hash = await hashSecret("bench-secret");
await declareOperator(db, {
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
    gateways: [{ id: `gw-bench-${i}`, secret_hash: hash, devices: lockers(DEVICES_PER_LOCATION - 1) }],
  })),
});
await db
  .updateTable("devices")
  .set({ seen_at: new Date(Date.now() + 3_600_000).toISOString() })
  .execute();

const { api, bare, token, sample } = await serveListing(db, "/location/v1/locations?include=resources");

announce({ api, bare, token, bytes: Buffer.byteLength(sample.body) });
