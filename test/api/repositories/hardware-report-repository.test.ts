import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type DeviceStateChangeRow,
  type HardwareEventRow,
  hardwareReportRepository,
} from "../../../cloud/gateway-link/hardware-report-repository.ts";
import { fx } from "../../support/fixture-site.ts";
import type { TestDb } from "../../support/test-db.ts";
import { openFixtureStore } from "./fixture-store.ts";

const LOCKER = fx.device("L1", "1");
const OTHER = fx.device("L1", "2");

const event = (seq: number, over: Partial<HardwareEventRow> = {}): HardwareEventRow => ({
  gateway_id: "gw-a1",
  outbox_id: "ob-1",
  seq,
  device_id: LOCKER,
  source: "bus0/1/1",
  event: "door_opened",
  detail: "",
  observed_at: "2026-01-15T09:59:59.000Z",
  received_at: "2026-01-15T10:00:00.000Z",
  ...over,
});

const change = (seq: number, over: Partial<DeviceStateChangeRow> = {}): DeviceStateChangeRow => ({
  gateway_id: "gw-a1",
  outbox_id: "ob-1",
  seq,
  device_id: LOCKER,
  from_value: "UNLOCKED",
  to_value: "LOCKED",
  lock_state: "LOCKED",
  cause: "startup",
  detail: "",
  observed_at: "2026-01-15T09:59:59.000Z",
  received_at: "2026-01-15T10:00:00.000Z",
  ...over,
});

describe("hardware report repository", () => {
  let store: TestDb;
  beforeAll(async () => {
    store = await openFixtureStore();
  });
  afterAll(() => store.drop());
  const repo = () => hardwareReportRepository(store.db);

  it("keeps a gateway's events, read back in the order received, then by outbox and seq", async () => {
    await repo().recordEvent(event(3, { received_at: "2026-01-15T10:00:05.000Z" }));
    await repo().recordEvent(event(2, { event: "tamper", device_id: null }));
    await repo().recordEvent(event(1, { outbox_id: "ob-0" }));
    await repo().recordEvent(event(1, { gateway_id: "gw-a2", device_id: null }));
    const events = await repo().eventsOf("gw-a1");
    expect(events.map((e) => [e.outbox_id, e.seq, e.event, e.device_id])).toEqual([
      ["ob-0", 1, "door_opened", LOCKER],
      ["ob-1", 2, "tamper", null],
      ["ob-1", 3, "door_opened", LOCKER],
    ]);
    expect(events[0]).toEqual(event(1, { outbox_id: "ob-0" }));
    expect(await repo().eventsOf("gw-b1")).toEqual([]);
  });

  it("keeps a device's state changes, read back in the order received, then by outbox and seq", async () => {
    await repo().recordStateChange(
      change(7, { received_at: "2026-01-15T10:00:09.000Z", to_value: "UNLOCKED" }),
    );
    await repo().recordStateChange(change(6));
    await repo().recordStateChange(change(5, { device_id: OTHER }));
    expect(await repo().stateChangesOf(LOCKER)).toEqual([
      change(6),
      change(7, { received_at: "2026-01-15T10:00:09.000Z", to_value: "UNLOCKED" }),
    ]);
    expect(await repo().stateChangesOf(fx.device("B1", "1"))).toEqual([]);
  });
});
