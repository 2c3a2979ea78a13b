/**
 * The fleet's store: a fresh PostgreSQL schema per run (applied_seqs deduplicates by (gateway_id, seq), so
 * a second run in the same schema would have its messages ignored), filled through the site manifest as
 * an operator would, and the URL that points the cloud process at that schema.
 */
import { sql } from "kysely";
import pg from "pg";
import { hashSecret } from "../../cloud/auth/secrets.ts";
import { applyManifest } from "../../cloud/manifest/apply-manifest.ts";
import { SiteManifest } from "../../cloud/manifest/manifest-schema.ts";
import { type Db, openDb } from "../../cloud/store/db.ts";
import { systemClock } from "../../shared/node/system-clock.ts";
import {
  clientId,
  FLEET_SECRET,
  gatewayId,
  LOCATIONS_PER_OPERATOR,
  LOCKERS_PER_GATEWAY,
  locationCode,
  operatorCount,
  operatorId,
} from "./fleet-shape.ts";

export const PG_URL = process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";

export type FleetStore = {
  db: Db;
  schema: string;
  /** DATABASE_URL for the cloud process: libpq's `options` sets its search_path to the schema. */
  url: string;
  drop(): Promise<void>;
};

/**
 * Opens and migrates the schema, again (at most twice) when the migration check failed: Kysely's migrator
 * reads the catalog of every schema in the database, and another run's schema may vanish under it.
 */
async function migrated(schema: string): Promise<Db> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await openDb({ kind: "postgres", url: PG_URL, schema });
    } catch (err) {
      if (attempt >= 3 || !String(err).includes("migration failed")) throw err;
    }
  }
}

export async function openFleetStore(gateways: number): Promise<FleetStore> {
  const schema = `fleet_${process.pid}_${gateways}_${Math.random().toString(36).slice(2, 8)}`;
  const drop = async () => {
    const c = new pg.Client({ connectionString: PG_URL });
    await c.connect();
    await c.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await c.end();
  };
  try {
    const db = await migrated(schema);
    const url = new URL(PG_URL);
    url.searchParams.set("options", `-c search_path=${schema}`);
    return {
      db,
      schema,
      url: url.toString(),
      async drop() {
        await db.destroy();
        await drop();
      },
    };
  } catch (err) {
    await drop();
    throw err;
  }
}

/** Declares `gateways` gateways of 1 GUARD + 15 lockers, one per location, 100 locations per operator. */
export async function declareFleet(db: Db, gateways: number): Promise<void> {
  const hash = await hashSecret(FLEET_SECRET);
  const operators = Array.from({ length: operatorCount(gateways) }, (_, k) => {
    const first = k * LOCATIONS_PER_OPERATOR;
    const count = Math.min(LOCATIONS_PER_OPERATOR, gateways - first);
    return {
      id: operatorId(k),
      name: `Fleet operator ${k}`,
      clients: [{ client_id: clientId(k), secret_hash: hash, permissions: [] }],
      locations: Array.from({ length: count }, (_, j) => {
        const i = first + j;
        return {
          code: locationCode(i),
          label: `Fleet location ${i}`,
          type: "BIKE_LOCKERS" as const,
          latitude: 52 + (i % 1000) / 1000,
          longitude: 4 + Math.floor(i / 1000) / 1000,
          tags: ["fleet"],
          gateways: [
            {
              id: gatewayId(i),
              secret_hash: hash,
              devices: Array.from({ length: LOCKERS_PER_GATEWAY }, (_, c) => ({
                alias: String(c + 1),
                type: "LOCKER" as const,
                bus: { board: 1, channel: c + 1 },
              })),
            },
          ],
        };
      }),
    };
  });
  await applyManifest(db, SiteManifest.parse({ version: 1, operators }), systemClock);
  // Statistics gathered, as a database that has run for a while would have them.
  await sql`ANALYZE devices, gateways, locations, operators`.execute(db);
}
