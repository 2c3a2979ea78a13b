import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { pino } from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { openGatewayDb } from "../../gateway/adapters/sqlite/open-db.ts";
import { SqliteOutbox } from "../../gateway/adapters/sqlite/outbox.ts";
import { OutboxSensorReadings } from "../../gateway/devices/sensor-readings.ts";
import { createStoreSpace } from "../../gateway/features/store-full.ts";
import type { MappedDevice, Pending } from "../../gateway/ports.ts";
import { FakeClock } from "../support/fake-clock.ts";

const LOCKER: MappedDevice = {
  device_id: "0b7c5f8e-1d2a-4c3b-9e4f-5a6b7c8d9e01",
  type: "LOCKER",
  alias: "L1",
  bus: { board: 1, channel: 1 },
  has_camera: false,
};

/** An outbox whose disk can be made full: every append then fails as SQLite's does. */
class FillableOutbox extends SqliteOutbox {
  full = false;
  override append(msg: Pending) {
    if (this.full) throw Object.assign(new Error("database or disk is full"), { code: "SQLITE_FULL" });
    return super.append(msg);
  }
}

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function rig() {
  const clock = new FakeClock();
  const dir = mkdtempSync(path.join(tmpdir(), "gw-sensors-full-"));
  dirs.push(dir);
  const outbox = new FillableOutbox(openGatewayDb(dir), "gw-1", clock);
  const sensors = new OutboxSensorReadings(outbox, clock);
  const retry = () => sensors.retryUntold();
  const space = createStoreSpace({ stateDir: dir, outbox, log: pino({ level: "silent" }), retry });
  const reports = () =>
    outbox.pending().flatMap((m) => (m.type === "device_state" ? [[m.cause, m.lock_state]] : []));
  return { outbox, sensors, space, reports };
}

describe("a sensor reading the full store refused", () => {
  it("is reported, as the device reads then, once the store has room (the heartbeat's storage check)", () => {
    const { outbox, sensors, space, reports } = rig();
    outbox.full = true;
    // A start's reading of a latch a command locked while the disk was full: the report cannot be kept.
    expect(() => sensors.record(LOCKER, { latch: "unlocked" }, "startup")).toThrow(/full/);
    sensors.note(LOCKER, { latch: "locked" }); // and the latch moved since, its own report lost too
    space.state();
    expect(reports()).toEqual([]);
    outbox.full = false;
    space.state();
    expect(reports()).toEqual([["startup", "LOCKED"]]);
    space.state(); // told once
    expect(reports()).toEqual([["startup", "LOCKED"]]);
  });

  it("is not reported again when a later reading already told the cloud", () => {
    const { outbox, sensors, space, reports } = rig();
    outbox.full = true;
    expect(() => sensors.record(LOCKER, { latch: "unlocked" }, "startup")).toThrow(/full/);
    outbox.full = false;
    sensors.record(LOCKER, { latch: "locked" }, "hardware_event");
    space.state();
    expect(reports()).toEqual([["hardware_event", "LOCKED"]]);
  });

  it("is told, and what it sets off done, when the hook of a latch reading is what the full store refused", () => {
    const { outbox, reports } = rig();
    const cleared: string[] = [];
    const dir = mkdtempSync(path.join(tmpdir(), "gw-sensors-full-"));
    dirs.push(dir);
    // As the daemon's: a locker seen unlocked is no longer parked (a store write that fails when full).
    const sensors = new OutboxSensorReadings(outbox, new FakeClock(), (id) => {
      if (outbox.full) throw Object.assign(new Error("database or disk is full"), { code: "SQLITE_FULL" });
      cleared.push(id);
    });
    const retrying = createStoreSpace({
      stateDir: dir,
      outbox,
      log: pino({ level: "silent" }),
      retry: () => sensors.retryUntold(),
    });
    outbox.full = true;
    expect(() => sensors.record(LOCKER, { latch: "unlocked" }, "technician")).toThrow(/full/);
    outbox.full = false;
    retrying.state();
    expect(reports()).toEqual([["technician", "UNLOCKED"]]);
    expect(cleared).toEqual([LOCKER.device_id]);
  });
});
