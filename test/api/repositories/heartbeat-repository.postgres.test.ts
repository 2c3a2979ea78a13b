import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { deviceRepository } from "../../../cloud/devices/device-repository.ts";
import { gatewayOutboxRepository } from "../../../cloud/gateway-link/gateway-outbox-repository.ts";
import { gatewayRepository } from "../../../cloud/gateway-link/gateway-repository.ts";
import { heartbeatRepository } from "../../../cloud/gateway-link/heartbeat-repository.ts";
import { fx } from "../../support/fixture-site.ts";
import type { TestDb } from "../../support/test-db.ts";
import { openFixtureStore } from "./fixture-store.ts";

const T0 = "2026-01-15T10:00:00.000Z";
const T1 = "2026-01-15T10:00:10.000Z";

// The batch statement is PostgreSQL's (SQLite writes heartbeats one by one in a transaction): this suite runs
// in the api-postgres project only (`*.postgres.test.ts`).
describe("heartbeat repository", () => {
  let store: TestDb;
  beforeAll(async () => {
    store = await openFixtureStore();
  });
  afterAll(() => store.drop());

  it("writes many gateways' heartbeats, what they said of themselves, reachability and outbox positions in one statement", async () => {
    const lockers = ["1", "2", "3", "4", "5"].map((a) => fx.device("L1", a));
    await heartbeatRepository(store.db).recordAtOnce(
      [
        {
          gateway_id: "gw-a1",
          at: T0,
          reachable: lockers.slice(1),
          outbox_depth: 3,
          runtime_version: "0.1.0",
          runtime_started_at: "2026-01-12T06:00:00.000Z",
        },
        { gateway_id: "gw-b1", at: T0, reachable: [fx.device("B1", "1")] },
      ],
      [{ gateway_id: "gw-a1", outbox_id: "ob-1", unconfirmed_from: 4, at: T0 }],
    );
    const gateways = gatewayRepository(store.db);
    expect((await gateways.find("gw-a1"))?.heartbeat_at).toBe(T0);
    expect((await gateways.find("gw-b1"))?.heartbeat_at).toBe(T0);
    // What each heartbeat said of its gateway, in the same statement; nothing said: null.
    expect(await gateways.find("gw-a1")).toMatchObject({
      outbox_depth: 3,
      runtime_version: "0.1.0",
      runtime_started_at: "2026-01-12T06:00:00.000Z",
    });
    expect(await gateways.find("gw-b1")).toMatchObject({
      outbox_depth: null,
      runtime_version: null,
      runtime_started_at: null,
    });
    expect((await gateways.find("gw-a2"))?.heartbeat_at).toBeNull();
    const devices = deviceRepository(store.db);
    // Reached devices are seen at the heartbeat; the one it no longer reaches is not.
    expect((await devices.find(lockers[1] as string))?.last_seen_at).toBe(T0);
    expect((await devices.find(lockers[0] as string))?.last_seen_at).toBeNull();
    expect(await gatewayOutboxRepository(store.db).positions()).toEqual([
      {
        gateway_id: "gw-a1",
        outbox_id: "ob-1",
        unconfirmed_from: 4,
        reported_at: T0,
        checkpoint_from: 4,
        checkpoint_at: T0,
      },
    ]);
  });

  it("keeps the last time a device it no longer reaches was seen, and an outbox position only growing", async () => {
    const gone = fx.device("L1", "2");
    await heartbeatRepository(store.db).recordAtOnce(
      [{ gateway_id: "gw-a1", at: T1, reachable: [] }],
      [{ gateway_id: "gw-a1", outbox_id: "ob-1", unconfirmed_from: 3, at: T1 }],
    );
    expect(await gatewayRepository(store.db).find("gw-a1")).toMatchObject({
      heartbeat_at: T1,
      outbox_depth: null, // the latest heartbeat said nothing of it
    });
    expect((await deviceRepository(store.db).find(gone))?.last_seen_at).toBe(T0);
    expect((await gatewayOutboxRepository(store.db).positions())[0]).toMatchObject({
      unconfirmed_from: 4,
      reported_at: T0,
    });
  });
});
