import pg from "pg";
import { describe, expect, it } from "vitest";
import { openTestDb, TEST_PG_URL } from "../support/test-db.ts";

/**
 * Migrating a store in a PostgreSQL database where others create and drop schemas meanwhile (replicas of
 * other services, parallel test runs): the migrator lists every schema's tables, and one dropped during
 * the listing must not fail the migration of ours.
 */
describe("migrating beside schemas that come and go", () => {
  it("opens every store while another connection creates and drops schemas", async () => {
    const churn = new pg.Client({ connectionString: TEST_PG_URL });
    await churn.connect();
    let running = true;
    const loop = (async () => {
      for (let i = 0; running; i++) {
        const name = `churn_${process.pid}_${i % 4}`;
        await churn.query(`CREATE SCHEMA IF NOT EXISTS ${name}`);
        await churn.query(`CREATE TABLE IF NOT EXISTS ${name}.t (x int)`);
        await churn.query(`DROP SCHEMA ${name} CASCADE`);
      }
    })();
    const failures: string[] = [];
    try {
      for (let n = 0; n < 12; n++) {
        const store = await openTestDb("postgres").catch((err: unknown) => {
          failures.push(String(err));
          return null;
        });
        await store?.drop();
      }
    } finally {
      running = false;
      await loop;
      await churn.end();
    }
    expect(failures).toEqual([]);
  });
});
