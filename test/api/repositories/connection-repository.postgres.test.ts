import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { deviceRepository } from "../../../cloud/devices/device-repository.ts";
import { connectionRepository } from "../../../cloud/site-events/connection-repository.ts";
import type { TestDb } from "../../support/test-db.ts";
import { openFixtureStore } from "./fixture-store.ts";

const T0 = "2026-01-15T10:00:00.000Z";
const T1 = "2026-01-15T10:01:00.000Z";
const T1_MINUS_30S = "2026-01-15T10:00:30.000Z";

// Parallel workers are PostgreSQL's: this part of the connection repository's suite runs in the api-postgres
// project only (`*.postgres.test.ts`).
describe("connection repository on PostgreSQL", () => {
  let store: TestDb;
  beforeAll(async () => {
    store = await openFixtureStore();
  });
  afterAll(() => store.drop());

  it("reads without parallel workers inside a transaction, and reads the same", async () => {
    await deviceRepository(store.db).markGuardSeen("gw-a1", T0);
    const repo = connectionRepository(store.db);
    const read = await store.db.transaction().execute(async (trx) => {
      const q = connectionRepository(trx);
      await q.withoutParallelWorkers();
      return q.changeCandidates(T1, T1_MINUS_30S);
    });
    expect(read.length).toBeGreaterThan(0);
    expect(read).toEqual(await repo.changeCandidates(T1, T1_MINUS_30S));
  });
});
