import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openGatewayStore } from "../../gateway/adapters/sqlite/gateway-store.ts";
import { openGatewayDb } from "../../gateway/adapters/sqlite/open-db.ts";
import { createControlApi } from "../../gateway/control/control-impl.ts";
import { CONTROL_ERROR } from "../../gateway/control/control-server.ts";
import { DeviceRegistry } from "../../gateway/devices/device-registry.ts";
import { OutboxSensorReadings } from "../../gateway/devices/sensor-readings.ts";
import type { Action, Actuator, GatewayStore, MappedDevice, Outcome } from "../../gateway/ports.ts";
import { CloudClock } from "../../gateway/time/cloud-clock.ts";
import type { DeviceMap } from "../../shared/wire/messages.ts";
import { installDiskFaults } from "../support/disk-full.ts";
import { FakeClock } from "../support/fake-clock.ts";

const GW = "gw-control";
const LOCKER = "11111111-1111-4111-8111-000000000001";
const DOOR = "11111111-1111-4111-8111-000000000002";
const MAP: DeviceMap = {
  gateway_id: GW,
  version: "v3",
  devices: [
    { device_id: LOCKER, type: "LOCKER", alias: "1", bus: { board: 1, channel: 1 }, has_camera: false },
    { device_id: DOOR, type: "BIKE_HOUSE_DOOR", alias: "north", bus: null, has_camera: false },
  ],
};

/** An actuator that does what it is told and says the latch went where it was sent. */
class ObedientActuator implements Actuator {
  readonly runs: [string, Action][] = [];
  run(device: MappedDevice, action: Action): Promise<Outcome> {
    this.runs.push([device.alias, action]);
    const latch = action === "lock" ? "locked" : "unlocked";
    return Promise.resolve({
      ok: true,
      reason: "",
      lockState: latch === "locked" ? "LOCKED" : "UNLOCKED",
      sensors: { latch },
    });
  }
}

let dir: string;
let store: GatewayStore;
let clock: FakeClock;
beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), "gw-control-"));
  clock = new FakeClock();
  store = openGatewayStore(dir, { gatewayId: GW, clock });
});
afterEach(() => {
  store.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The control API on real store, registry and sensor readings; no buses, readers or broker behind it. */
function api(map: DeviceMap | null, cloudTime?: CloudClock) {
  const devices = new DeviceRegistry();
  if (map) devices.replace(map);
  const sensors = new OutboxSensorReadings(store.outbox, clock);
  const actuator = new ObedientActuator();
  const control = createControlApi({
    gateway: {
      id: GW,
      brokerUrl: "mqtt://127.0.0.1:1883",
      startedAt: clock.now(),
      clock,
      cloudTime,
      broker: { connected: true, connectedSince: clock.now().toISOString() },
    },
    devices: { directory: devices, sensors, actuator, read: () => Promise.resolve() },
    store,
    buses: [],
    readers: [],
  });
  return { control, sensors, actuator };
}

const mapCheck = async (map: DeviceMap | null) =>
  (await api(map).control.doctor()).find((c) => c.check === "device map");

describe("the daemon's control API", () => {
  it("doctor fails while the gateway has never had a device map, and says how it gets one", async () => {
    expect(await mapCheck(null)).toMatchObject({
      status: "fail",
      detail: expect.stringMatching(/no device map/),
      hint: expect.stringMatching(/broker/),
    });
  });

  it("doctor warns on a device map with no devices, and passes one that has some", async () => {
    expect(await mapCheck({ ...MAP, devices: [] })).toMatchObject({
      status: "warn",
      detail: "version v3, 0 devices",
      hint: expect.stringMatching(/manifest/),
    });
    expect(await mapCheck(MAP)).toMatchObject({ status: "pass", detail: "version v3, 2 devices", hint: "" });
  });

  it("doctor measures the wall clock against the cloud's: not yet synced, within the bound, or off by how much", async () => {
    const cloudTime = new CloudClock({ clock, monotonic: clock });
    const clockCheck = async () =>
      (await api(MAP, cloudTime).control.doctor()).find((c) => c.check === "clock");
    expect(await clockCheck()).toMatchObject({
      status: "warn",
      detail: expect.stringMatching(/^not yet synced with the cloud's clock/),
    });
    cloudTime.observe(new Date(clock.now().getTime() + 1_200).toISOString());
    expect(await clockCheck()).toMatchObject({
      status: "pass",
      detail: expect.stringMatching(/^within 1\.2 s of the cloud's/),
    });
    clock.setWall(clock.now().getTime() + 86_400_000 + 1_200); // the wall clock set a day ahead
    expect(await clockCheck()).toMatchObject({
      status: "warn",
      detail: expect.stringMatching(/^the wall clock is 86400\.0 s ahead of the cloud's/),
    });
  });

  it("doctor runs the store's own integrity check", async () => {
    const checks = await api(MAP).control.doctor();
    expect(checks.find((c) => c.check === "database")).toMatchObject({
      status: "pass",
      detail: "quick_check: ok",
    });
  });

  it("lists devices with their live latch, door and item, and their last command with its reason", async () => {
    const { control, sensors } = api(MAP);
    const locker = MAP.devices[0] as MappedDevice;
    sensors.record(locker, { latch: "locked", door_open: false, item_present: true }, "sweep");
    store.commandLog.record({
      command_id: "c-1",
      device_id: LOCKER,
      name: "unlock",
      state: "RECEIVED",
      at: clock.now().toISOString(),
    });
    store.commandLog.finish("c-1", "ERROR", "latch jammed", "LOCKED", clock.now().toISOString());
    const views = await control.devices();
    expect(views.map((v) => v.alias)).toEqual(["1", "north"]);
    expect(views[0]).toMatchObject({
      latch: "locked",
      door_open: false,
      item_present: true,
      read_at: clock.now().toISOString(),
      last_command: { name: "unlock", result: "ERROR", command_id: "c-1", reason: "latch jammed" },
    });
    expect(views[1]).toMatchObject({ latch: null, reachable: true, last_command: null });
  });

  it("shows the booking the gateway holds for a device until it ends on the gateway's clock", async () => {
    const { control } = api(MAP);
    const until = new Date(clock.now().getTime() + 60_000).toISOString();
    store.bookings.put({
      device_id: LOCKER,
      holder: "rider-7",
      until,
      command_id: "c-2",
      booked_at: clock.now().toISOString(),
    });
    expect((await control.device("1"))?.booking).toEqual({ holder: "rider-7", until });
    expect((await control.device("north"))?.booking).toBeNull();
    clock.advance(60_000);
    expect((await control.device("1"))?.booking).toBeNull();
  });

  it("records a technician's actuation locally and reports it to the cloud", async () => {
    const { control, actuator } = api(MAP);
    const result = await control.actuate("1", "unlock", "ana", "stuck bike");
    expect(result).toMatchObject({ ok: true, result: "ok", latch: "unlocked" });
    expect(actuator.runs).toEqual([["1", "unlock"]]);
    const reader = openGatewayDb(dir);
    try {
      expect(
        reader.prepare("SELECT who, why, device_alias, action, result FROM local_actions").all(),
      ).toEqual([{ who: "ana", why: "stuck bike", device_alias: "1", action: "unlock", result: "ok" }]);
    } finally {
      reader.close();
    }
    const sent = store.outbox.pending();
    expect(sent.find((m) => m.type === "hardware_event")).toMatchObject({
      device_id: LOCKER,
      source: "parkctl",
      event: "latch_unlocked",
      detail: "unlock by ana: stuck bike (ok)",
    });
    expect(sent.find((m) => m.type === "device_state")).toMatchObject({
      device_id: LOCKER,
      lock_state: "UNLOCKED",
      cause: "technician",
    });
  });

  it("refuses an actuation the full store cannot record: nothing moves, and parkctl says why", async () => {
    const { control, actuator } = api(MAP);
    const disks = installDiskFaults();
    try {
      disks.set(path.join(dir, "gateway.db"), true);
      for (const act of [
        () => control.actuate("1", "lock", "ana", "stuck bike"),
        () => control.testCycle("1", "ana"),
      ])
        await expect(act()).rejects.toMatchObject({
          code: CONTROL_ERROR.failed,
          message: expect.stringMatching(
            /^refused, nothing moved: the action could not be recorded \(.*full/,
          ),
        });
      expect(actuator.runs).toEqual([]);
    } finally {
      disks.uninstall();
    }
  });

  it("when the disk fills while the latch moves, says what it did, and tells the cloud once there is room", async () => {
    const { control, sensors, actuator } = api(MAP);
    const disks = installDiskFaults();
    const file = path.join(dir, "gateway.db");
    try {
      const run = actuator.run.bind(actuator);
      actuator.run = (device, action) => {
        disks.set(file, true);
        return run(device, action);
      };
      await expect(control.actuate("1", "lock", "ana", "stuck bike")).rejects.toMatchObject({
        code: CONTROL_ERROR.failed,
        message: expect.stringMatching(
          /^lock: ok, latch locked, but not recorded here \(.*full.*\); the cloud/,
        ),
      });
      expect(actuator.runs).toEqual([["1", "lock"]]);
      expect(store.outbox.pending()).toEqual([]);
      disks.set(file, false);
      sensors.retryUntold(); // what the heartbeat's storage check does once there is room
      expect(store.outbox.pending()).toMatchObject([
        { type: "device_state", device_id: LOCKER, lock_state: "LOCKED", cause: "technician" },
      ]);
    } finally {
      disks.uninstall();
    }
  });

  it("answers device_not_found for an alias it does not drive", async () => {
    await expect(api(MAP).control.actuate("99", "lock", "ana", "test")).rejects.toMatchObject({
      code: CONTROL_ERROR.deviceNotFound,
    });
  });
});
