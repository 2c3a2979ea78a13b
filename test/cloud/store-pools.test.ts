import { sql } from "kysely";
import { describe, expect, it } from "vitest";
import { openPostgresPool } from "../../cloud/store/db.ts";
import { TEST_PG_URL } from "../support/test-db.ts";

/** The cloud's extra PostgreSQL pools (cloud/server.ts): the heartbeats' commits without the WAL wait. */
describe("PostgreSQL pools", () => {
  const setting = async (durable: boolean, url: string) => {
    const db = await openPostgresPool({ kind: "postgres", url }, 1, { durable });
    try {
      const r = await sql<{ synchronous_commit: string }>`SHOW synchronous_commit`.execute(db);
      return r.rows[0]?.synchronous_commit;
    } finally {
      await db.destroy();
    }
  };

  it("a pool that need not be durable commits without waiting for the flush; others wait", async () => {
    expect(await setting(false, TEST_PG_URL)).toBe("off");
    expect(await setting(true, TEST_PG_URL)).toBe("on");
  });

  it("keeps that setting when DATABASE_URL carries start-up options of its own", async () => {
    const url = new URL(TEST_PG_URL);
    url.searchParams.set("options", "-c search_path=public");
    expect(await setting(false, url.toString())).toBe("off");
  });
});
