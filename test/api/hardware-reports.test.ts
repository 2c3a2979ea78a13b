import pino from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { redeliverPending } from "../../cloud/commands/command-delivery.ts";
import { commandRepository } from "../../cloud/commands/command-repository.ts";
import { deviceRepository } from "../../cloud/devices/device-repository.ts";
import { hardwareReportRepository } from "../../cloud/gateway-link/hardware-report-repository.ts";
import { Command } from "../../shared/api/command.ts";
import { Device } from "../../shared/api/device.ts";
import { type CloudHarness, startCloudHarness } from "../support/cloud-harness.ts";
import { CLIENTS, fx, OP_A } from "../support/fixture-site.ts";
import { gatewayReports, type SensorReading } from "../support/gateway-reports.ts";
import { declareExternalUsers, manifestRiderId } from "../support/riders.ts";

/** A rider of operator A, whom the integrator locks for (ACT_ON_BEHALF_OF). */
const RIDER = manifestRiderId(OP_A, "rider-1");

const LOCKER = fx.device("L1", "1");
const OTHER = fx.device("L1", "2");
const THROTTLE_MS = 3_000;
const DELIVERY_MS = 30_000;

let h: CloudHarness;
const gateway = gatewayReports(() => h);
beforeEach(async () => {
  h = await startCloudHarness();
  await declareExternalUsers(h, { operatorId: OP_A, riders: [{ user_id: "rider-1" }] });
});
afterEach(() => h.close());

async function post(deviceId: string, body: Record<string, unknown>) {
  const res = await h.call(CLIENTS.admin, {
    method: "POST",
    url: `/device/v1/devices/${deviceId}/commands`,
    payload: body,
  });
  expect(res.statusCode, res.body).toBe(200);
  return Command.parse(res.json());
}

async function device(id: string) {
  const res = await h.call(CLIENTS.admin, { method: "GET", url: `/device/v1/devices/${id}` });
  expect(res.statusCode, res.body).toBe(200);
  return Device.parse(res.json());
}

/** Plays gw-a1 reporting what its sensors say. */
const sensed = (deviceId: string, reading: SensorReading, gatewayId = "gw-a1") =>
  gateway.deviceState(gatewayId, deviceId, reading);

const progress = (
  cmd: Command,
  state: "RECEIVED" | "SUCCESS" | "ERROR",
  lock_state?: "LOCKED" | "UNLOCKED",
) => gateway.progress("gw-a1", cmd, state, { lock_state });

const changes = async (id: string) =>
  (await hardwareReportRepository(h.db).stateChangesOf(id)).map(
    ({ from_value, to_value, lock_state, cause, detail }) => ({
      from_value,
      to_value,
      lock_state,
      cause,
      detail,
    }),
  );

describe("the cloud's state follows the sensors outside a command in flight", () => {
  it("a free locker found locked is LOCKED, and the change is recorded with who and why", async () => {
    await sensed(LOCKER, { lock_state: "LOCKED", cause: "technician", detail: "lock by alice: testing" });
    const d = await device(LOCKER);
    expect(d.state).toMatchObject({
      value: "LOCKED",
      timeout_at: null,
      changed_at: h.clock.now().toISOString(),
    });
    expect(d.lock_state).toBe("LOCKED");
    expect(await changes(LOCKER)).toEqual([
      {
        from_value: "UNLOCKED",
        to_value: "LOCKED",
        lock_state: "LOCKED",
        cause: "technician",
        detail: "lock by alice: testing",
      },
    ]);
  });

  it("a locked locker found unlocked is UNLOCKED: available, its occupant gone", async () => {
    const lock = await post(LOCKER, { command: "lock", user_id: RIDER });
    await progress(lock, "SUCCESS", "LOCKED");
    expect((await device(LOCKER)).user?.id).toBe(RIDER);
    await sensed(LOCKER, { lock_state: "UNLOCKED", cause: "hardware_event" });
    const d = await device(LOCKER);
    expect(d.state.value).toBe("UNLOCKED");
    expect(d.user).toBeNull();
  });

  it("a booked locker found locked is LOCKED: the booking is over", async () => {
    await progress(await post(LOCKER, { command: "book" }), "SUCCESS");
    expect((await device(LOCKER)).state.value).toBe("BOOKED");
    await sensed(LOCKER, { lock_state: "LOCKED" });
    expect((await device(LOCKER)).state).toMatchObject({ value: "LOCKED", timeout_at: null });
  });

  it("a reading that agrees changes nothing and records nothing", async () => {
    const before = await device(LOCKER);
    await sensed(LOCKER, { lock_state: "UNLOCKED", cause: "startup" });
    expect((await device(LOCKER)).state).toEqual(before.state);
    expect(await changes(LOCKER)).toEqual([]);
  });

  it("during a command in flight only lock_state moves; the command's outcome settles the state", async () => {
    const lock = await post(LOCKER, { command: "lock" });
    await sensed(LOCKER, { lock_state: "UNLOCKED" });
    await sensed(LOCKER, { lock_state: "LOCKED" });
    let d = await device(LOCKER);
    expect(d.state.value).toBe("ALLOCATED");
    expect(d.lock_state).toBe("LOCKED");
    await progress(lock, "SUCCESS", "LOCKED");
    d = await device(LOCKER);
    expect(d.state.value).toBe("LOCKED");
  });

  it("a failed command with a reading settles on the reading, not on the state it came from", async () => {
    const lock = await post(LOCKER, { command: "lock" });
    // The latch did lock, but the confirmation came back as a failure (e.g. it moved too slowly).
    await progress(lock, "ERROR", "LOCKED");
    expect((await device(LOCKER)).state.value).toBe("LOCKED");
  });

  it("keeps door and item readings, and never counts a report as a heartbeat", async () => {
    await sensed(LOCKER, { door_open: true, item_present: true });
    const stored = await deviceRepository(h.db).find(LOCKER);
    expect(stored).toMatchObject({
      door_open: true,
      item_present: true,
      sensors_at: h.clock.now().toISOString(),
      last_seen_at: null,
    });
    expect((await device(LOCKER)).heartbeat_v2).toBeNull();
  });

  it("ignores a report about a device of another gateway", async () => {
    await sensed(LOCKER, { lock_state: "LOCKED" }, "gw-a2");
    const d = await device(LOCKER);
    expect(d.state.value).toBe("UNLOCKED");
    expect(d.lock_state).toBe("UNLOCKED");
  });
});

describe("sleep states reported by the gateway (spec: Device sleep_state)", () => {
  const REMOTE_WAKEUP = fx.device("L1", "4");
  const LOCAL_WAKEUP = fx.device("L1", "5");

  it("a device_state with sleep_state shows in the device record, alone or beside a lock reading", async () => {
    await sensed(REMOTE_WAKEUP, { sleep_state: "LIGHT_SLEEP" });
    expect(await device(REMOTE_WAKEUP)).toMatchObject({
      power_save_strategy: "REMOTE_WAKEUP",
      sleep_state: "LIGHT_SLEEP",
    });
    await sensed(REMOTE_WAKEUP, { sleep_state: "", lock_state: "LOCKED" });
    expect(await device(REMOTE_WAKEUP)).toMatchObject({
      sleep_state: "",
      lock_state: "LOCKED",
      state: { value: "LOCKED" },
    });
    // A reading that says nothing of sleep leaves the sleep state as it was.
    await sensed(REMOTE_WAKEUP, { sleep_state: "LIGHT_SLEEP" });
    await sensed(REMOTE_WAKEUP, { door_open: false });
    expect((await device(REMOTE_WAKEUP)).sleep_state).toBe("LIGHT_SLEEP");
  });

  it("a LOCAL_WAKEUP device reported in deep sleep takes no command until it is reported awake", async () => {
    await sensed(LOCAL_WAKEUP, { sleep_state: "DEEP_SLEEP" });
    expect((await device(LOCAL_WAKEUP)).sleep_state).toBe("DEEP_SLEEP");
    const res = await h.call(CLIENTS.admin, {
      method: "POST",
      url: `/device/v1/devices/${LOCAL_WAKEUP}/commands`,
      payload: { command: "lock" },
    });
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json()).toMatchObject({ error_code: "ERRORS.DEVICE_ASLEEP" });
    await sensed(LOCAL_WAKEUP, { sleep_state: "", cause: "tap" });
    expect((await device(LOCAL_WAKEUP)).sleep_state).toBe("");
    expect((await post(LOCAL_WAKEUP, { command: "lock" })).state.value).toBe("SENT");
  });

  it("ignores a sleep state about a device of another gateway", async () => {
    await sensed(LOCAL_WAKEUP, { sleep_state: "DEEP_SLEEP" }, "gw-a2");
    expect((await device(LOCAL_WAKEUP)).sleep_state).toBe("");
  });
});

describe("a gateway's report that overtakes the broker's acknowledgement", () => {
  it("records the hand-over (REQUEST_SENT) before what the gateway reports", async () => {
    h.gateways.mode = "fail"; // the publish is not acknowledged (yet)
    const cmd = await post(LOCKER, { command: "lock" });
    expect(cmd.state.value).toBe("NOT_SENT");
    await progress(cmd, "RECEIVED");
    await progress(cmd, "SUCCESS", "LOCKED");
    const res = await h.call(CLIENTS.admin, { method: "GET", url: `/device/v1/commands/${cmd.id}` });
    expect(res.json().events.map((e: { name: string }) => e.name)).toEqual([
      "REQUEST_INITIATED",
      "REQUEST_SENT",
      "RESPONSE_COMMAND_RECEIVED",
      "RESPONSE_DEVICE_LOCKED",
    ]);
  });
});

describe("commands waiting for their gateway are delivered again when it comes back", () => {
  const log = pino({ level: "silent" });
  const redeliver = () =>
    redeliverPending(h.db, h.gateways, "gw-a1", { clock: h.clock, timeouts: h.timeouts, log });

  it("publishes again, in order, exactly what the gateway has not taken and whose deadline has not passed", async () => {
    h.gateways.mode = "fail";
    const notSent = await post(LOCKER, { command: "lock" });
    expect(notSent.state.value).toBe("NOT_SENT");
    h.gateways.mode = "ok";
    h.clock.advance(10);
    const sent = await post(OTHER, { command: "lock" });
    const taken = await post(fx.device("L1", "3"), { command: "lock" });
    await progress(taken, "RECEIVED");
    h.gateways.commands = [];

    expect(await redeliver()).toBe(2);
    expect(h.gateways.commands.map((c) => c.request.command_id)).toEqual([notSent.id, sent.id]);
    // The request goes out as it was first made: same deadline, same parameters.
    const first = await commandRepository(h.db).find(notSent.id);
    expect(h.gateways.commands[0]?.request).toEqual(first?.wire_request);
    // Handed to the broker now: the command that never left is SENT.
    const again = await h.call(CLIENTS.admin, { method: "GET", url: `/device/v1/commands/${notSent.id}` });
    expect(again.json().state.value).toBe("SENT");
  });

  it("never sends a command past its delivery deadline", async () => {
    await post(LOCKER, { command: "lock" });
    h.clock.advance(DELIVERY_MS);
    h.gateways.commands = [];
    expect(await redeliver()).toBe(0);
    expect(h.gateways.commands).toEqual([]);
  });

  it("a force command carries the command it supersedes", async () => {
    const lock = await post(LOCKER, { command: "lock" });
    h.clock.advance(THROTTLE_MS);
    const force = await post(LOCKER, { command: "force-unlock", reason: "MAINTENANCE" });
    expect(h.gateways.last().request).toMatchObject({ command_id: force.id, supersedes: lock.id });
    h.gateways.commands = [];
    await redeliver();
    // The superseded lock is ERROR now, so only the force command goes again.
    expect(h.gateways.commands.map((c) => c.request.command_id)).toEqual([force.id]);
  });
});
