import pino from "pino";
import { describe, expect, it } from "vitest";
import { FakeClock } from "../../test/support/fake-clock.ts";
import { DeviceRegistry } from "../devices/device-registry.ts";
import { OutboxSensorReadings } from "../devices/sensor-readings.ts";
import type { Outbox, Pending } from "../ports.ts";
import { createDoorWatch } from "./door-watch.ts";

const DOOR = "d0000000-0000-4000-8000-000000000001";
const HELD_S = 300;

function rig() {
  const clock = new FakeClock();
  const appended: Pending[] = [];
  let full = false;
  const outbox = {
    append(m: Pending) {
      if (full) throw Object.assign(new Error("database or disk is full"), { code: "SQLITE_FULL" });
      appended.push(m);
      return m;
    },
  } as unknown as Outbox;
  const registry = new DeviceRegistry();
  registry.replace({
    gateway_id: "gw",
    version: "v1",
    devices: [{ device_id: DOOR, type: "BIKE_HOUSE_DOOR", alias: "north", bus: null, has_camera: false }],
  });
  const sensors = new OutboxSensorReadings(outbox, clock, undefined, clock);
  const watch = createDoorWatch({
    registry,
    sensors,
    outbox,
    clock,
    monotonic: clock,
    log: pino({ level: "silent" }),
    heldOpenS: HELD_S,
    everyS: 5,
  });
  const door = (open: boolean) => sensors.record(registry.get(DOOR)!, { door_open: open }, "hardware_event");
  type Raised = Extract<Pending, { type: "hardware_event" }>;
  const alarms = () =>
    appended.filter((m): m is Raised => m.type === "hardware_event" && m.event === "door_held_open");
  return { clock, watch, door, alarms, setFull: (f: boolean) => (full = f) };
}

describe("door held open", () => {
  it("is raised once per opening, after the hold measured from the reading that showed it open", () => {
    const r = rig();
    r.door(true);
    r.clock.advance(HELD_S * 1000 - 1);
    expect(r.watch.check()).toBe(0);
    r.clock.advance(1);
    expect(r.watch.check()).toBe(1);
    r.clock.advance(60_000);
    expect(r.watch.check()).toBe(0);
    r.door(false);
    r.door(true);
    r.clock.advance(HELD_S * 1000);
    expect(r.watch.check()).toBe(1);
    expect(r.alarms()).toHaveLength(2);
  });

  it("a wall clock set a day ahead raises nothing early; one set back holds nothing", () => {
    const r = rig();
    r.door(true);
    r.clock.setWall(r.clock.now().getTime() + 86_400_000);
    expect(r.watch.check()).toBe(0);
    r.door(false);
    r.door(true);
    r.clock.setWall(r.clock.now().getTime() - 2 * 86_400_000);
    r.clock.advance(HELD_S * 1000);
    expect(r.watch.check()).toBe(1);
    expect(r.alarms()[0]?.detail).toContain(new Date(r.clock.now().getTime() - HELD_S * 1000).toISOString());
  });

  it("one the full store refused goes in at a later round, though the door has closed since", () => {
    const r = rig();
    r.door(true);
    r.clock.advance(HELD_S * 1000);
    r.setFull(true);
    expect(() => r.watch.check()).toThrow("disk is full");
    expect(() => r.watch.check()).toThrow("disk is full");
    expect(() => r.door(false)).toThrow("disk is full"); // its reading is owed; the picture has it closed
    r.setFull(false);
    r.watch.check();
    r.watch.check();
    expect(r.alarms()).toHaveLength(1);
  });
});
