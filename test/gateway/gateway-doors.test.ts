import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import pino from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { HardwareActuator } from "../../gateway/adapters/hardware/actuator.ts";
import { GpioDoors } from "../../gateway/adapters/hardware/gpio-doors.ts";
import { openGatewayDb } from "../../gateway/adapters/sqlite/open-db.ts";
import { SqliteOutbox } from "../../gateway/adapters/sqlite/outbox.ts";
import { DeviceRegistry } from "../../gateway/devices/device-registry.ts";
import { OutboxSensorReadings } from "../../gateway/devices/sensor-readings.ts";
import { doorRelocker, handleBoardEvent } from "../../gateway/features/board-events.ts";
import { LockBusClient } from "../../gateway/lock-bus/lock-bus-client.ts";
import { createSimSite } from "../../hardware-sim/site.ts";
import type { DeviceMap, DeviceStateReport } from "../../shared/wire/messages.ts";
import { FakeClock } from "../support/fake-clock.ts";

const log = pino({ level: "silent" });
const GPIO_DOOR = "d0000000-0000-4000-8000-000000000001";
const BUS_DOOR = "d0000000-0000-4000-8000-000000000002";
const MAP: DeviceMap = {
  gateway_id: "gw-doors",
  version: "v1",
  devices: [
    { device_id: GPIO_DOOR, type: "BIKE_HOUSE_DOOR", alias: "north", bus: null, has_camera: false },
    { device_id: BUS_DOOR, type: "DOOR", alias: "south", bus: { board: 1, channel: 2 }, has_camera: false },
  ],
};
const RELEASE_S = 10;
/** Lets the simulator's replies and the handlers' promises run (the fake clock moves no real time). */
const settle = async (turns = 30) => {
  for (let i = 0; i < turns; i++) await new Promise((r) => setImmediate(r));
};

let cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanup.reverse()) await c();
  cleanup = [];
});

/** The gateway's door parts on the simulator: GPIO door "north", bus door lock on board 1 channel 2. */
async function rig() {
  const clock = new FakeClock();
  const dir = mkdtempSync(path.join(tmpdir(), "gw-doors-"));
  const db = openGatewayDb(dir);
  const outbox = new SqliteOutbox(db, "gw-doors", clock);
  const registry = new DeviceRegistry();
  registry.replace(MAP);
  const site = createSimSite(
    { moveMs: 0, buses: { bus0: { boards: [{ address: 1, channels: 2, doors: [2] }] } }, doors: ["north"] },
    { timers: clock },
  );
  const bus = new LockBusClient({
    name: "bus0",
    path: "sim://bus0",
    baudRate: 115_200,
    openLink: (p, b) => site.linkFactory(p, b),
    clock,
    log,
  });
  await bus.start();
  const doors = new GpioDoors(site.gpio, clock, RELEASE_S);
  doors.track(registry.all());
  const sensors = new OutboxSensorReadings(outbox, clock);
  const actuator = new HardwareActuator(() => bus, doors, clock, RELEASE_S);
  doors.on("relocked", (d) => sensors.record(d, { latch: "locked" }, "door_relock"));
  doors.on("door", (d, open) => sensors.record(d, { door_open: open }, "hardware_event"));
  bus.on("event", (e) =>
    handleBoardEvent(
      {
        outbox,
        registry,
        sensors,
        log,
        busName: "bus0",
        relockDoor: doorRelocker(actuator, sensors, log),
        readBoard: () => {},
      },
      e,
    ),
  );
  cleanup.push(async () => {
    doors.close();
    await bus.stop();
    await site.close();
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const states = (deviceId: string) =>
    outbox
      .pending()
      .filter((m): m is DeviceStateReport => m.type === "device_state" && m.device_id === deviceId);
  return { clock, site, actuator, sensors, registry, states, doors };
}

/**
 * A daemon releases the door and dies inside the window: its timer goes with it (a clock that never moves
 * again), the line stays driven. `meanwhile` runs before the next daemon takes the door.
 */
function takeOverAfterKill(r: Awaited<ReturnType<typeof rig>>, meanwhile = () => {}): GpioDoors {
  const killed = new GpioDoors(r.site.gpio, new FakeClock(), RELEASE_S);
  killed.track(r.registry.all());
  killed.release(GPIO_DOOR);
  meanwhile();
  const next = new GpioDoors(r.site.gpio, r.clock, RELEASE_S);
  r.site.gpio.close();
  next.track(r.registry.all());
  return next;
}

describe("doors lock again when they close, not only when the release window ends", () => {
  it("a GPIO door: released, pushed open, swung shut → the strike drops at once and the cloud hears it", async () => {
    const r = await rig();
    const door = r.site.door("north");
    const device = r.registry.get(GPIO_DOOR)!;
    const out = await r.actuator.run(device, "unlock");
    expect(out).toMatchObject({ ok: true, lockState: "UNLOCKED" });
    expect(door.isStrikeReleased).toBe(true);
    expect(door.push()).toBe(true);
    r.clock.advance(2_000);
    door.close();
    expect(door.isStrikeReleased).toBe(false); // 8 s before the window would have ended
    expect(r.states(GPIO_DOOR).map((m) => [m.lock_state, m.door_open, m.cause])).toEqual([
      [undefined, true, "hardware_event"],
      [undefined, false, "hardware_event"],
      ["LOCKED", false, "door_relock"],
    ]);
  });

  it("a GPIO door nobody opens locks again when its window ends", async () => {
    const r = await rig();
    const door = r.site.door("north");
    await r.actuator.run(r.registry.get(GPIO_DOOR)!, "unlock");
    r.clock.advance(RELEASE_S * 1000 - 1);
    expect(door.isStrikeReleased).toBe(true);
    r.clock.advance(1);
    expect(door.isStrikeReleased).toBe(false);
    expect(r.states(GPIO_DOOR).at(-1)).toMatchObject({ lock_state: "LOCKED", cause: "door_relock" });
  });

  it("a strike a killed daemon left released engages within one window of the next one's start", async () => {
    const r = await rig();
    const door = r.site.door("north");
    const next = takeOverAfterKill(r);
    const relocked: string[] = [];
    next.on("relocked", (d, why) => relocked.push(`${d.alias} ${why}`));
    r.clock.advance(RELEASE_S * 1000 - 1);
    expect(door.isStrikeReleased).toBe(true);
    r.clock.advance(1);
    expect(door.isStrikeReleased).toBe(false);
    expect(relocked).toEqual(["north timeout"]);
    next.close();
  });

  it("a strike found released with its door open engages when the door closes", async () => {
    const r = await rig();
    const door = r.site.door("north");
    const next = takeOverAfterKill(r, () => door.push());
    r.clock.advance(1_000);
    door.close();
    expect(door.isStrikeReleased).toBe(false);
    next.close();
  });

  it("a daemon that stops engages every strike it had released", async () => {
    const r = await rig();
    const door = r.site.door("north");
    await r.actuator.run(r.registry.get(GPIO_DOOR)!, "unlock");
    expect(door.isStrikeReleased).toBe(true);
    r.doors.close();
    expect(door.isStrikeReleased).toBe(false);
    expect(r.states(GPIO_DOOR).at(-1)).toMatchObject({ lock_state: "LOCKED", cause: "door_relock" });
  });

  it("a GPIO door refuses lock (it locks by itself) and reads its lines for status", async () => {
    const r = await rig();
    const device = r.registry.get(GPIO_DOOR)!;
    expect((await r.actuator.run(device, "lock")).ok).toBe(false);
    expect(await r.actuator.run(device, "status")).toMatchObject({
      ok: true,
      lockState: "LOCKED",
      sensors: { latch: "locked", door_open: false },
    });
  });

  it("a bus door lock: the door closes while its hold runs → the gateway locks it at once", async () => {
    const r = await rig();
    const board = r.site.board("bus0", 1);
    const device = r.registry.get(BUS_DOOR)!;
    expect(await r.actuator.run(device, "unlock")).toMatchObject({ ok: true, lockState: "UNLOCKED" });
    expect(board.openDoor(2)).toBe(true);
    await settle();
    r.clock.advance(1_000);
    board.closeDoor(2);
    await settle();
    expect(board.channel(2).latch).toBe("locked"); // the hold (10 s) has not run out
    expect(board.received.filter((q) => q.kind === "lock")).toHaveLength(1);
    expect(r.states(BUS_DOOR).at(-1)).toMatchObject({
      lock_state: "LOCKED",
      door_open: false,
      cause: "door_relock",
    });
  });

  it("a closing door whose lock is already engaged is left alone", async () => {
    const r = await rig();
    const board = r.site.board("bus0", 1);
    r.sensors.record(r.registry.get(BUS_DOOR)!, { latch: "locked" }, "startup");
    board.event(2, "door_closed");
    await settle();
    expect(board.received.filter((q) => q.kind === "lock")).toHaveLength(0);
  });
});
