import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { accessEventRepository } from "../../../cloud/key-sync/access-event-repository.ts";
import { applyManifest } from "../../../cloud/manifest/apply-manifest.ts";
import { SiteManifest } from "../../../cloud/manifest/manifest-schema.ts";
import type { AccessEventsTable } from "../../../cloud/store/tables/key-sync-tables.ts";
import { fixtureSecretHash } from "../../support/cloud-harness.ts";
import { FakeClock } from "../../support/fake-clock.ts";
import { fixtureManifest, fx, OP_A, OP_B } from "../../support/fixture-site.ts";
import { openTestDb, type TestDb } from "../../support/test-db.ts";

/** The access-event repository against both stores, on the fixture site (its gateways). */

const TS = "2026-01-15T10:00:00.000Z";
const L1 = fx.location("L1");
const LOCKER = fx.device("L1", "1");

let store: TestDb;
let events: ReturnType<typeof accessEventRepository>;

const tap = (o: Partial<AccessEventsTable> = {}): AccessEventsTable => ({
  gateway_id: "gw-a1",
  outbox_id: "outbox-1",
  seq: 1,
  operator_id: OP_A,
  location_id: L1,
  device_id: LOCKER,
  reader: "reader-1",
  card_id: "0a0b",
  granted: 1,
  action: "lock",
  reason: "parked",
  whitelist_id: null,
  decided_by: "local",
  actuated: 1,
  observed_at: TS,
  received_at: TS,
  ...o,
});

beforeEach(async () => {
  store = await openTestDb();
  await applyManifest(
    store.db,
    SiteManifest.parse(fixtureManifest(await fixtureSecretHash())),
    new FakeClock(TS),
  );
  events = accessEventRepository(store.db);
});
afterEach(() => store.drop());

describe("access events", () => {
  it("places a gateway's taps under its operator and location; an unknown gateway has none", async () => {
    expect(await events.placeOf("gw-a1")).toEqual({ operator_id: OP_A, location_id: L1 });
    expect(await events.placeOf("gw-b1")).toEqual({ operator_id: OP_B, location_id: fx.location("B1") });
    expect(await events.placeOf("gw-nowhere")).toBeUndefined();
  });

  it("keeps a tap once per outbox message, and reads a device's taps in the order observed", async () => {
    const later = tap({ seq: 2, card_id: "ffee", granted: 0, observed_at: "2026-01-15T10:05:00.000Z" });
    await events.record(later);
    await events.record(tap());
    // The same message again (a replay): ignored, even when it reads differently.
    await events.record(tap({ card_id: "0c0c" }));
    await events.record(tap({ seq: 3, device_id: null }));
    expect(await events.atDevice(LOCKER)).toEqual([tap(), later]);
    expect(await events.atDevice(fx.device("L1", "2"))).toEqual([]);
  });
});
