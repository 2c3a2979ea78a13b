import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import pino from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { openGatewayStore } from "../../gateway/adapters/sqlite/gateway-store.ts";
import { type GatewayConfigInput, parseGatewayConfig } from "../../gateway/config.ts";
import { type RunningGateway, startGateway } from "../../gateway/gateway.ts";
import { DEEP_SLEEP_REASON } from "../../gateway/power-save/sleep-states.ts";
import { createSimSite, type SimSite } from "../../hardware-sim/site.ts";
import type {
  AccessDecision,
  CommandProgress,
  CommandRequest,
  DeviceMap,
  DeviceStateReport,
  UpMessage,
} from "../../shared/wire/messages.ts";
import { eventually } from "../support/eventually.ts";
import { FakeClock } from "../support/fake-clock.ts";
import { StandInBrokerLink } from "../support/stand-in-broker-link.ts";

const log = pino({ level: process.env.TEST_LOG_LEVEL ?? "silent" });
const GW = "gw-power-save";
const LOCATION = "10000000-0000-4000-8000-000000000002";
const REMOTE = "20000000-0000-4000-8000-0000000000a1";
const LOCAL = "20000000-0000-4000-8000-0000000000a2";
const ALWAYS_ON = "20000000-0000-4000-8000-0000000000a3";
const WL = "30000000-0000-4000-8000-0000000000a1";
const MEMBER = "04a1b2c3d4";
/** How long the simulated REMOTE_WAKEUP channel takes to wake on a request. */
const WAKE_MS = 800;

const MAP: DeviceMap = {
  gateway_id: GW,
  version: "m1",
  location: { id: LOCATION, rfid_parking: true },
  devices: [
    {
      device_id: REMOTE,
      type: "LOCKER",
      alias: "1",
      bus: { board: 1, channel: 1 },
      has_camera: false,
      power_save_strategy: "REMOTE_WAKEUP",
    },
    {
      device_id: LOCAL,
      type: "LOCKER",
      alias: "2",
      bus: { board: 1, channel: 2 },
      has_camera: false,
      power_save_strategy: "LOCAL_WAKEUP",
    },
    { device_id: ALWAYS_ON, type: "LOCKER", alias: "3", bus: { board: 1, channel: 3 }, has_camera: false },
  ],
};

/** Lets the in-memory cables and the gateway's promise chains run (cables deliver on setImmediate). */
const settle = async (turns = 20) => {
  for (let i = 0; i < turns; i++) await new Promise((r) => setImmediate(r));
};

let cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanup.reverse()) await c();
  cleanup = [];
});

let counter = 0;
const newCommandId = () => `cccccccc-0000-4000-8000-${String(++counter).padStart(12, "0")}`;

/**
 * A real gateway daemon on the in-memory simulator: lockers 1 (REMOTE_WAKEUP, sleeps lightly), 2
 * (LOCAL_WAKEUP, sleeps deeply; its reader belongs to it) and 3 (always on) on board 1. The simulator and
 * the gateway share one fake clock; the stand-in broker link is connected and records what goes up. The
 * device map is in the store from the start, so the devices are read once, when the board first answers.
 */
async function rig(o: { config?: Partial<GatewayConfigInput>; before?: (sim: SimSite) => void } = {}) {
  const clock = new FakeClock();
  const dir = mkdtempSync(path.join(tmpdir(), "gw-power-save-"));
  const stateDir = path.join(dir, "state");
  const seeded = openGatewayStore(stateDir, { gatewayId: GW, clock });
  seeded.deviceMaps.save(MAP);
  seeded.close();
  const sim = createSimSite(
    {
      moveMs: 0,
      buses: {
        bus0: {
          boards: [
            {
              address: 1,
              channels: 3,
              latch: "unlocked",
              powerSave: { light: [1], deep: [2], wakeMs: WAKE_MS },
            },
          ],
        },
      },
      readers: { "reader-2": { aliveMs: false, wakes: { bus: "bus0", board: 1, channel: 2 } } },
    },
    { timers: clock },
  );
  o.before?.(sim);
  const link = new StandInBrokerLink(clock, GW);
  const config = parseGatewayConfig({
    gateway_id: GW,
    secret: "power-save-test-secret",
    broker: { url: "mqtt://127.0.0.1:1", prefix: "t" },
    state_dir: stateDir,
    buses: [{ name: "bus0", path: "sim://bus0", boards: [1] }],
    readers: [{ id: "reader-2", path: "sim://reader-2", device_alias: "2" }],
    sensor_sweep: null,
    key_sweep: null,
    log_level: "silent",
    ...o.config,
  });
  const gateway: RunningGateway = await startGateway({
    config,
    secret: "power-save-test-secret",
    clock,
    monotonic: clock,
    log,
    openLink: (p) => sim.linkFactory(p),
    gpio: sim.gpio,
    brokerLink: () => link,
    controlSocket: false,
  });
  cleanup.push(async () => {
    await gateway.stop();
    await sim.close();
    rmSync(dir, { recursive: true, force: true });
  });
  link.connect();

  const board = sim.board("bus0", 1);

  /** Moves the shared fake clock in small steps, letting everything run between them, until `done`. */
  async function advanceUntil(done: () => boolean | Promise<boolean>, stepMs = 50, maxMs = 20_000) {
    for (let t = 0; !(await done()); t += stepMs) {
      if (t > maxMs) throw new Error(`not done within ${maxMs} ms on the fake clock`);
      clock.advance(stepMs);
      await settle();
    }
  }

  /** The sleep states reported up for a device, in order ("" is awake). */
  const sleepReports = (deviceId: string) =>
    link.up
      .filter(
        (m): m is DeviceStateReport =>
          m.type === "device_state" && m.device_id === deviceId && m.sleep_state !== undefined,
      )
      .map((m) => m.sleep_state);

  /** What parkctl shows of a device's power save (no fresh reading: that would wake a light sleeper). */
  const powerSave = async (alias: string) =>
    (await gateway.control.devices()).find((d) => d.alias === alias)?.power_save;

  /** The cloud sends a command; resolves with its terminal progress, moving the fake clock meanwhile. */
  async function command(
    over: Partial<CommandRequest>,
  ): Promise<{ received: CommandProgress; end: CommandProgress }> {
    const now = clock.now().getTime();
    const req: CommandRequest = {
      command_id: newCommandId(),
      device_id: REMOTE,
      name: "lock",
      params: {},
      issued_at: new Date(now).toISOString(),
      expires_at: new Date(now + 60_000).toISOString(),
      ...over,
    };
    const progress = () =>
      link.up.filter(
        (m: UpMessage): m is CommandProgress =>
          m.type === "command_progress" && m.command_id === req.command_id,
      );
    link.emit("command", req);
    await advanceUntil(() => progress().some((p) => p.state !== "RECEIVED"));
    const [received, end] = progress();
    if (!received || !end) throw new Error("no RECEIVED and outcome");
    return { received, end };
  }

  // The start-up reads, one device after the other, are over once the last one is known (unless a
  // device sleeps through them: the test then moves the clock).
  if (!o.before)
    await eventually(async () => {
      const devices = await gateway.control.devices();
      expect(devices.map((d) => d.latch)).toEqual(["unlocked", "unlocked", "unlocked"]);
    });
  return { clock, sim, link, gateway, board, advanceUntil, sleepReports, powerSave, command };
}

const ms = (from: string, to: string) => Date.parse(to) - Date.parse(from);

describe("power save: REMOTE_WAKEUP", () => {
  it("a device in light sleep is woken by the command itself and answers after its wake-up delay", async () => {
    const r = await rig();
    await eventually(() => expect(r.sleepReports(REMOTE)).toEqual([""]));
    r.board.sleep(1, "light");
    await eventually(() => expect(r.sleepReports(REMOTE)).toEqual(["", "LIGHT_SLEEP"]));
    expect(await r.powerSave("1")).toEqual({ strategy: "REMOTE_WAKEUP", sleep_state: "LIGHT_SLEEP" });

    const { received, end } = await r.command({ device_id: REMOTE, name: "lock" });
    expect(end).toMatchObject({ state: "SUCCESS", lock_state: "LOCKED", reason: "" });
    // The extra latency the spec warns of: the board answered only once the channel was awake.
    expect(ms(received.observed_at, end.observed_at)).toBeGreaterThanOrEqual(WAKE_MS);
    expect(r.board.channel(1).latch).toBe("locked");
    expect(r.board.sleepState(1)).toBe("awake");
    await eventually(() => expect(r.sleepReports(REMOTE)).toEqual(["", "LIGHT_SLEEP", ""]));
    expect(await r.powerSave("1")).toEqual({ strategy: "REMOTE_WAKEUP", sleep_state: "" });
  });

  it("without the wake-up allowance (remote_wakeup_ms: 0) the bus deadline runs out before it wakes", async () => {
    const r = await rig({ config: { remote_wakeup_ms: 0 } });
    r.board.sleep(1, "light");
    await eventually(() => expect(r.sleepReports(REMOTE)).toContain("LIGHT_SLEEP"));
    const { received, end } = await r.command({ device_id: REMOTE, name: "lock" });
    expect(end).toMatchObject({ state: "ERROR" });
    expect(end.reason).toMatch(/did not answer/);
    expect(ms(received.observed_at, end.observed_at)).toBeLessThan(WAKE_MS);
  });
});

describe("power save: LOCAL_WAKEUP", () => {
  /** Puts locker 2 in deep sleep and waits until the gateway knows it. */
  async function asleep(r: Awaited<ReturnType<typeof rig>>) {
    await eventually(() => expect(r.sleepReports(LOCAL)).toEqual([""]));
    r.board.sleep(2, "deep");
    await eventually(() => expect(r.sleepReports(LOCAL)).toEqual(["", "DEEP_SLEEP"]));
  }

  it("a device in deep sleep gets no command: it ends ERROR with the reason and the latch does not move", async () => {
    const r = await rig();
    await asleep(r);
    expect(await r.powerSave("2")).toEqual({ strategy: "LOCAL_WAKEUP", sleep_state: "DEEP_SLEEP" });
    const sent = r.board.received.length;

    for (const name of ["lock", "sync-device"] as const) {
      const { end } = await r.command({ device_id: LOCAL, name });
      expect(end).toMatchObject({ state: "ERROR", reason: DEEP_SLEEP_REASON });
    }
    expect(r.board.received.length).toBe(sent);
    expect(r.board.channel(2).latch).toBe("unlocked");
    // A booking needs only the gateway, so it is still taken (as the cloud's command rules say).
    const now = r.clock.now().getTime();
    const { end: booked } = await r.command({
      device_id: LOCAL,
      name: "book",
      params: { booking: { holder: "app-user-1", until: new Date(now + 3_600_000).toISOString() } },
    });
    expect(booked.state).toBe("SUCCESS");
    // A device that never sleeps is not held up by its neighbour.
    const { end: other } = await r.command({ device_id: ALWAYS_ON, name: "lock" });
    expect(other).toMatchObject({ state: "SUCCESS", lock_state: "LOCKED" });
  });

  it("a tap on its reader wakes it: the tap parks in it, and the next command goes through", async () => {
    const r = await rig();
    r.link.deliver({
      kind: "snapshot",
      gateway_id: GW,
      version: 1,
      part: 1,
      parts: 1,
      grants: [
        {
          card_id: MEMBER,
          whitelist_id: WL,
          status: "ACTIVE",
          expires_at: null,
          is_master_key: false,
          location_ids: [LOCATION],
          device_ids: [],
        },
      ],
    });
    await r.link.until(() => r.link.versions().includes(1));
    await asleep(r);
    const decided: AccessDecision[] = [];
    r.gateway.onAccess((d) => decided.push(d));
    r.sim.reader("reader-2").tap(MEMBER);
    await r.advanceUntil(() => decided.length > 0);
    expect(decided).toMatchObject([{ device_id: LOCAL, action: "lock", reason: "parked", actuated: true }]);
    expect(r.board.channel(2).latch).toBe("locked");
    await eventually(() => expect(r.sleepReports(LOCAL)).toEqual(["", "DEEP_SLEEP", ""]));

    const { end } = await r.command({ device_id: LOCAL, name: "force-unlock" });
    expect(end).toMatchObject({ state: "SUCCESS", lock_state: "UNLOCKED" });
    expect(r.board.channel(2).latch).toBe("unlocked");
  });

  it("any event from its channel shows it awake (someone opened its door)", async () => {
    const r = await rig();
    await asleep(r);
    r.board.openDoor(2);
    await eventually(() => expect(r.sleepReports(LOCAL)).toEqual(["", "DEEP_SLEEP", ""]));
    const { end } = await r.command({ device_id: LOCAL, name: "sync-device" });
    expect(end).toMatchObject({ state: "SUCCESS" });
  });

  it("a gateway started after the device fell asleep learns it from its silence while the board answers", async () => {
    const r = await rig({ before: (sim) => sim.board("bus0", 1).sleep(2, "deep") });
    await r.advanceUntil(() => r.sleepReports(LOCAL).includes("DEEP_SLEEP"));
    expect(r.sleepReports(LOCAL)).toEqual(["DEEP_SLEEP"]);
    expect(await r.powerSave("2")).toEqual({ strategy: "LOCAL_WAKEUP", sleep_state: "DEEP_SLEEP" });
    const { end } = await r.command({ device_id: LOCAL, name: "unlock" });
    expect(end).toMatchObject({ state: "ERROR", reason: DEEP_SLEEP_REASON });
  });
});
