import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { deviceRepository } from "../../../cloud/devices/device-repository.ts";
import { connectionRepository } from "../../../cloud/site-events/connection-repository.ts";
import { fx, OP_A } from "../../support/fixture-site.ts";
import type { TestDb } from "../../support/test-db.ts";
import { openFixtureStore } from "./fixture-store.ts";

const T0 = "2026-01-15T10:00:00.000Z";
const T0_MINUS_30S = "2026-01-15T09:59:30.000Z";
const T1 = "2026-01-15T10:01:00.000Z";
const T1_MINUS_30S = "2026-01-15T10:00:30.000Z";
const GUARD = fx.guard("gw-a1");

describe("connection repository", () => {
  let store: TestDb;
  beforeAll(async () => {
    store = await openFixtureStore();
  });
  afterAll(() => store.drop());
  const repo = () => connectionRepository(store.db);

  it("offers no device never heard of", async () => {
    expect(await repo().changeCandidates(T0, T0_MINUS_30S)).toEqual([]);
    expect(await repo().notified()).toEqual(new Map());
  });

  it("offers a device heard of and never notified, with what health is judged on", async () => {
    await deviceRepository(store.db).markGuardSeen("gw-a1", T0);
    expect(await repo().changeCandidates(T0, T0_MINUS_30S)).toEqual([
      {
        id: GUARD,
        operator_id: OP_A,
        location_id: fx.location("L1"),
        alias: expect.any(String),
        type: "GUARD",
        last_seen_at: T0,
        offline_at: null,
        notified: null,
      },
    ]);
  });

  it("records first sightings once: a device already noted keeps its note", async () => {
    await repo().recordFirstSights([{ deviceId: GUARD, online: true }], T0);
    await repo().recordFirstSights([{ deviceId: GUARD, online: false }], T0);
    expect(await repo().notified()).toEqual(new Map([[GUARD, true]]));
    // Notified online and seen within the window: nothing may have changed.
    expect(await repo().changeCandidates(T0, T0_MINUS_30S)).toEqual([]);
  });

  it("offers a device notified online once it was last seen at or before the dead line", async () => {
    const [candidate] = await repo().changeCandidates(T1, T1_MINUS_30S);
    expect(candidate).toMatchObject({ id: GUARD, notified: 1, last_seen_at: T0 });
  });

  it("claims a change only from what was last notified", async () => {
    expect(await repo().claimChange(GUARD, false, true, T1)).toBe(false);
    expect(await repo().claimChange(GUARD, true, false, T1)).toBe(true);
    expect(await repo().claimChange(GUARD, true, false, T1)).toBe(false);
    expect(await repo().notified()).toEqual(new Map([[GUARD, false]]));
  });

  it("reads every device of the locations where some were notified and none online", async () => {
    const dark = await repo().devicesOfDarkLocations();
    const atL1 = await deviceRepository(store.db).listAtLocation(OP_A, fx.location("L1"));
    expect(dark.map((d) => d.id).sort()).toEqual(atL1.map((d) => d.id).sort());
    expect(dark.find((d) => d.id === GUARD)?.notified).toBe(0);
    await repo().claimChange(GUARD, false, true, T1);
    expect(await repo().devicesOfDarkLocations()).toEqual([]);
  });

  it("confirms an outage once", async () => {
    expect(await repo().confirmOutage(fx.location("L1"), T0, T1)).toBe(true);
    expect(await repo().confirmOutage(fx.location("L1"), T0, T1)).toBe(false);
    expect(await repo().confirmOutage(fx.location("D1"), T0, T1)).toBe(true);
    expect(await repo().outages()).toEqual(
      [
        { location_id: fx.location("D1"), offline_since: T0 },
        { location_id: fx.location("L1"), offline_since: T0 },
      ].sort((a, b) => a.location_id.localeCompare(b.location_id)),
    );
  });
});
