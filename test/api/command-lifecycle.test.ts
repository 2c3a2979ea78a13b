import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { deviceRepository } from "../../cloud/devices/device-repository.ts";
import { Command } from "../../shared/api/command.ts";
import { Device } from "../../shared/api/device.ts";
import { CommandRequest as WireCommandRequest } from "../../shared/wire/messages.ts";
import { type CloudHarness, startCloudHarness } from "../support/cloud-harness.ts";
import { CLIENTS, fx, OP_A } from "../support/fixture-site.ts";
import { gatewayReports } from "../support/gateway-reports.ts";
import { declareExternalUsers, manifestRiderId } from "../support/riders.ts";

/** A rider of operator A, whom the integrator locks for (ACT_ON_BEHALF_OF). */
const RIDER = manifestRiderId(OP_A, "user-7");

const LOCKER = fx.device("L1", "1");
const REMOTE_WAKEUP_LOCKER = fx.device("L1", "4");
const DOOR = fx.device("H1", "door");
const LEGACY_DOOR = fx.device("H1", "legacy-door");
const CAMERA_GUARD = fx.guard("gw-a1");

const DELIVERY_MS = 30_000;
const HARDWARE_MS = 30_000;
const DOOR_RELEASE_MS = 10_000;
const THROTTLE_MS = 3_000;
const PUBLISH_WAIT_MS = 2_000;

let h: CloudHarness;
/** Plays the gateways: progress on a command, sensor readings no command caused. */
const { progress, deviceState, nextSeq } = gatewayReports(() => h);

beforeEach(async () => {
  h = await startCloudHarness();
  await declareExternalUsers(h, { operatorId: OP_A, riders: [{ user_id: "user-7" }] });
});
afterEach(() => h.close());

const iso = (ms: number) => new Date(ms).toISOString();
const nowMs = () => h.clock.now().getTime();
const names = (c: Command) => c.events.map((e) => e.name);

async function post(deviceId: string, body: Record<string, unknown>, as: string = CLIENTS.admin) {
  const res = await h.call(as, {
    method: "POST",
    url: `/device/v1/devices/${deviceId}/commands`,
    payload: body,
  });
  expect(res.statusCode, res.body).toBe(200);
  return Command.parse(res.json());
}

async function getCommand(id: string): Promise<Command> {
  const res = await h.call(CLIENTS.admin, { method: "GET", url: `/device/v1/commands/${id}` });
  expect(res.statusCode, res.body).toBe(200);
  return Command.parse(res.json());
}

async function getDevice(id: string): Promise<Device> {
  const res = await h.call(CLIENTS.admin, { method: "GET", url: `/device/v1/devices/${id}` });
  expect(res.statusCode, res.body).toBe(200);
  return Device.parse(res.json());
}

/** Plays gw-a1 completing a command: it is then SUCCESS, and its event names are returned. */
async function succeeded(cmd: Pick<Command, "id" | "device">, lock_state?: "LOCKED" | "UNLOCKED") {
  expect(await progress("gw-a1", cmd, "SUCCESS", { lock_state })).toBe("applied");
  const done = await getCommand(cmd.id);
  expect(done.state).toEqual({ value: "SUCCESS", reason: "", timeout_at: null });
  return names(done);
}

/** Locks a locker through its gateway and leaves the throttle window behind. */
async function lockedLocker(deviceId = LOCKER, gatewayId = "gw-a1") {
  const cmd = await post(deviceId, { command: "lock" });
  expect(await progress(gatewayId, cmd, "SUCCESS", { lock_state: "LOCKED" })).toBe("applied");
  expect((await getDevice(deviceId)).state.value).toBe("LOCKED");
  h.clock.advance(THROTTLE_MS);
}

/** Books a locker and plays its gateway recording the booking; the locker is then BOOKED. */
async function bookedLocker(body: Record<string, unknown> = {}, as: string = CLIENTS.admin) {
  const cmd = await post(LOCKER, { command: "book", ...body }, as);
  expect(await progress("gw-a1", cmd, "SUCCESS")).toBe("applied");
  expect((await getDevice(LOCKER)).state.value).toBe("BOOKED");
  return cmd;
}

describe("lock and unlock through the gateway", () => {
  it("answers a lock with SENT, the delivery deadline and REQUEST_INITIATED, REQUEST_SENT; the device is ALLOCATED until then", async () => {
    const t0 = nowMs();
    const cmd = await post(LOCKER, { command: "lock" });
    expect(cmd.name).toBe("lock");
    expect(cmd.uri).toBe(`/device/v1/commands/${cmd.id}`);
    expect(cmd.device).toEqual({ id: LOCKER, uri: `/device/v1/devices/${LOCKER}` });
    expect(cmd.state).toEqual({ value: "SENT", reason: "", timeout_at: iso(t0 + DELIVERY_MS) });
    expect(cmd.events).toEqual([
      { name: "REQUEST_INITIATED", timestamp: iso(t0) },
      { name: "REQUEST_SENT", timestamp: iso(t0) },
    ]);
    const d = await getDevice(LOCKER);
    expect(d.state).toEqual({ value: "ALLOCATED", changed_at: iso(t0), timeout_at: iso(t0 + DELIVERY_MS) });
    expect(d.lock_state).toBe("UNLOCKED");
  });

  it("publishes a wire CommandRequest to the device's gateway that expires at the delivery deadline", async () => {
    const t0 = nowMs();
    const cmd = await post(LOCKER, { command: "lock" });
    expect(h.gateways.commands).toHaveLength(1);
    const sent = h.gateways.last();
    expect(sent.gatewayId).toBe("gw-a1");
    const wire = WireCommandRequest.parse(sent.request);
    expect(wire).toMatchObject({
      command_id: cmd.id,
      device_id: LOCKER,
      name: "lock",
      issued_at: iso(t0),
      expires_at: iso(t0 + DELIVERY_MS),
    });
    expect(wire.expires_at).toBe(cmd.state.timeout_at);
  });

  it("gives a REMOTE_WAKEUP locker 30 s more to take the command", async () => {
    const t0 = nowMs();
    const cmd = await post(REMOTE_WAKEUP_LOCKER, { command: "lock" });
    expect(cmd.state.timeout_at).toBe(iso(t0 + 2 * DELIVERY_MS));
    expect((await getDevice(REMOTE_WAKEUP_LOCKER)).state.timeout_at).toBe(iso(t0 + 2 * DELIVERY_MS));
    expect(h.gateways.last().request.expires_at).toBe(iso(t0 + 2 * DELIVERY_MS));
  });

  it("moves lock SENT → RECEIVED → SUCCESS and the device ALLOCATED → LOCKING → LOCKED, then unlock back to UNLOCKED", async () => {
    const cmd = await post(LOCKER, { command: "lock" });

    h.clock.advance(1_000);
    const tReceived = nowMs();
    expect(await progress("gw-a1", cmd, "RECEIVED")).toBe("applied");
    const received = await getCommand(cmd.id);
    expect(received.state).toEqual({
      value: "RECEIVED",
      reason: "",
      timeout_at: iso(tReceived + HARDWARE_MS),
    });
    const locking = await getDevice(LOCKER);
    expect(locking.state).toEqual({
      value: "LOCKING",
      changed_at: iso(tReceived),
      timeout_at: iso(tReceived + HARDWARE_MS),
    });

    h.clock.advance(1_000);
    const tLocked = nowMs();
    expect(await succeeded(cmd, "LOCKED")).toEqual([
      "REQUEST_INITIATED",
      "REQUEST_SENT",
      "RESPONSE_COMMAND_RECEIVED",
      "RESPONSE_DEVICE_LOCKED",
    ]);
    const locked = await getDevice(LOCKER);
    expect(locked.state).toEqual({ value: "LOCKED", changed_at: iso(tLocked), timeout_at: null });
    expect(locked.lock_state).toBe("LOCKED");

    h.clock.advance(THROTTLE_MS);
    const tUnlock = nowMs();
    const unlock = await post(LOCKER, { command: "unlock" });
    expect(unlock.state).toEqual({ value: "SENT", reason: "", timeout_at: iso(tUnlock + DELIVERY_MS) });
    // UNLOCKING carries the hardware confirmation window: at the latest, delivery plus confirmation.
    expect((await getDevice(LOCKER)).state).toEqual({
      value: "UNLOCKING",
      changed_at: iso(tUnlock),
      timeout_at: iso(tUnlock + DELIVERY_MS + HARDWARE_MS),
    });
    expect(h.gateways.last().request).toMatchObject({ command_id: unlock.id, name: "unlock" });

    h.clock.advance(1_000);
    await progress("gw-a1", unlock, "RECEIVED");
    expect((await getDevice(LOCKER)).state).toMatchObject({
      value: "UNLOCKING",
      timeout_at: iso(nowMs() + HARDWARE_MS),
    });
    expect((await getCommand(unlock.id)).state.value).toBe("RECEIVED");

    h.clock.advance(1_000);
    expect(await succeeded(unlock, "UNLOCKED")).toEqual([
      "REQUEST_INITIATED",
      "REQUEST_SENT",
      "RESPONSE_COMMAND_RECEIVED",
      "RESPONSE_DEVICE_UNLOCKED",
    ]);
    const free = await getDevice(LOCKER);
    expect(free.state).toEqual({ value: "UNLOCKED", changed_at: iso(nowMs()), timeout_at: null });
    expect(free.lock_state).toBe("UNLOCKED");
    expect(free.user).toBeNull();
  });

  it("shows exactly REQUEST_INITIATED, REQUEST_SENT, RESPONSE_DEVICE_LOCKED for a lock confirmed at once", async () => {
    const cmd = await post(LOCKER, { command: "lock" });
    h.clock.advance(500);
    await progress("gw-a1", cmd, "SUCCESS", { lock_state: "LOCKED" });
    const done = await getCommand(cmd.id);
    expect(done.state.value).toBe("SUCCESS");
    expect(names(done)).toEqual(["REQUEST_INITIATED", "REQUEST_SENT", "RESPONSE_DEVICE_LOCKED"]);
    expect(done.events[2]?.timestamp).toBe(iso(nowMs()));
    expect((await getDevice(LOCKER)).state.value).toBe("LOCKED");
  });

  it("locks a BOOKED locker: the booking ends in LOCKED and an unlock makes it UNLOCKED, not BOOKED", async () => {
    await bookedLocker({ timeout_at: iso(nowMs() + 10 * 60_000) });
    const t0 = nowMs();
    const cmd = await post(LOCKER, { command: "lock" });
    expect((await getDevice(LOCKER)).state).toEqual({
      value: "ALLOCATED",
      changed_at: iso(t0),
      timeout_at: iso(t0 + DELIVERY_MS),
    });
    await progress("gw-a1", cmd, "RECEIVED");
    expect((await getDevice(LOCKER)).state.value).toBe("LOCKING");
    await progress("gw-a1", cmd, "SUCCESS", { lock_state: "LOCKED" });
    expect((await getDevice(LOCKER)).state).toMatchObject({ value: "LOCKED", timeout_at: null });

    h.clock.advance(THROTTLE_MS);
    const unlock = await post(LOCKER, { command: "unlock" });
    await progress("gw-a1", unlock, "SUCCESS", { lock_state: "UNLOCKED" });
    expect((await getDevice(LOCKER)).state).toMatchObject({ value: "UNLOCKED", timeout_at: null });
  });

  it("force-locks an UNLOCKED locker through LOCKING to LOCKED", async () => {
    const cmd = await post(LOCKER, { command: "force-lock" });
    expect(cmd.state.value).toBe("SENT");
    expect((await getDevice(LOCKER)).state.value).toBe("LOCKING");
    await progress("gw-a1", cmd, "SUCCESS", { lock_state: "LOCKED" });
    expect((await getCommand(cmd.id)).state.value).toBe("SUCCESS");
    expect(names(await getCommand(cmd.id))).toContain("RESPONSE_DEVICE_LOCKED");
    expect((await getDevice(LOCKER)).state).toMatchObject({ value: "LOCKED", timeout_at: null });
  });

  it("answers GET command with the same record POST answered, and with its progress afterwards", async () => {
    const posted = await post(LOCKER, { command: "lock" });
    expect(await getCommand(posted.id)).toEqual(posted);
    await progress("gw-a1", posted, "RECEIVED");
    const got = await getCommand(posted.id);
    expect(got.id).toBe(posted.id);
    expect(got.events.slice(0, 2)).toEqual(posted.events);
  });
});

describe("deadlines", () => {
  it("ends a lock the gateway never acknowledges in ERROR at the delivery deadline and returns the device to UNLOCKED", async () => {
    const t0 = nowMs();
    const cmd = await post(LOCKER, { command: "lock" });

    h.clock.advance(DELIVERY_MS - 1);
    expect(await h.sweep()).toBe(0);
    expect((await getCommand(cmd.id)).state.value).toBe("SENT");
    expect((await getDevice(LOCKER)).state.value).toBe("ALLOCATED");

    h.clock.advance(1);
    expect(await h.sweep()).toBe(1);
    const failed = await getCommand(cmd.id);
    expect(failed.state.value).toBe("ERROR");
    expect(failed.state.reason).toMatch(/deadline/);
    expect(failed.state.timeout_at).toBeNull();
    expect(names(failed)).toEqual(["REQUEST_INITIATED", "REQUEST_SENT", "REQUEST_TIMED_OUT"]);
    const d = await getDevice(LOCKER);
    expect(d.state).toEqual({ value: "UNLOCKED", changed_at: iso(t0 + DELIVERY_MS), timeout_at: null });
    expect(d.user).toBeNull();
  });

  it("returns a locker locked from BOOKED to BOOKED with its original booking timeout when the lock times out", async () => {
    const bookedUntil = iso(nowMs() + 10 * 60_000);
    await bookedLocker({ timeout_at: bookedUntil });
    const cmd = await post(LOCKER, { command: "lock" });
    h.clock.advance(DELIVERY_MS + 1_000);
    await h.sweep();
    const failed = await getCommand(cmd.id);
    expect(failed.state.value).toBe("ERROR");
    expect(failed.state.reason).toMatch(/deadline/);
    expect((await getDevice(LOCKER)).state).toMatchObject({ value: "BOOKED", timeout_at: bookedUntil });
  });

  it("ends a RECEIVED lock the hardware never confirms in ERROR at the hardware deadline, not the delivery one", async () => {
    const cmd = await post(LOCKER, { command: "lock" });
    h.clock.advance(5_000);
    const tReceived = nowMs();
    await progress("gw-a1", cmd, "RECEIVED");

    // Past the original delivery deadline (t0 + 30 s), before the hardware one (t0 + 35 s).
    h.clock.advance(DELIVERY_MS - 5_000 + 1_000);
    expect(await h.sweep()).toBe(0);
    expect((await getCommand(cmd.id)).state.value).toBe("RECEIVED");
    expect((await getDevice(LOCKER)).state.value).toBe("LOCKING");

    h.clock.advance(tReceived + HARDWARE_MS - nowMs());
    expect(await h.sweep()).toBe(1);
    const failed = await getCommand(cmd.id);
    expect(failed.state.value).toBe("ERROR");
    expect(failed.state.reason).toMatch(/deadline/);
    expect(failed.state.reason).toMatch(/confirm/);
    expect((await getDevice(LOCKER)).state).toMatchObject({ value: "UNLOCKED", timeout_at: null });
  });

  it("returns an unlocking locker to LOCKED when the unlock times out", async () => {
    await lockedLocker();
    const unlock = await post(LOCKER, { command: "unlock" });
    h.clock.advance(DELIVERY_MS);
    await h.sweep();
    expect((await getCommand(unlock.id)).state.value).toBe("ERROR");
    const d = await getDevice(LOCKER);
    expect(d.state).toMatchObject({ value: "LOCKED", timeout_at: null });
    expect(d.lock_state).toBe("LOCKED");
  });

  it("answers NOT_SENT when the broker hangs, and the delivery deadline still ends the command in ERROR", async () => {
    h.gateways.mode = "hang";
    const t0 = nowMs();
    // The POST waits for the broker on the cloud's clock: once it waits, move the clock past its patience.
    const waiting = h.clock.pendingTimers();
    const posted = post(LOCKER, { command: "lock" });
    await vi.waitFor(() => expect(h.clock.pendingTimers()).toBeGreaterThan(waiting), { timeout: 10_000 });
    h.clock.advance(PUBLISH_WAIT_MS);
    const cmd = await posted;
    expect(cmd.state).toEqual({ value: "NOT_SENT", reason: "", timeout_at: iso(t0 + DELIVERY_MS) });
    expect(names(cmd)).toEqual(["REQUEST_INITIATED"]);
    expect(h.gateways.commands).toHaveLength(0);
    expect((await getDevice(LOCKER)).state.value).toBe("ALLOCATED");

    h.clock.advance(DELIVERY_MS - PUBLISH_WAIT_MS);
    expect(await h.sweep()).toBe(1);
    const failed = await getCommand(cmd.id);
    expect(failed.state.value).toBe("ERROR");
    expect(failed.state.reason).toMatch(/deadline/);
    expect((await getDevice(LOCKER)).state).toMatchObject({ value: "UNLOCKED", timeout_at: null });
  });

  it("answers NOT_SENT at once when the broker rejects the command, and ends it at the delivery deadline", async () => {
    h.gateways.mode = "fail";
    const cmd = await post(LOCKER, { command: "lock" });
    expect(cmd.state.value).toBe("NOT_SENT");
    h.clock.advance(DELIVERY_MS);
    await h.sweep();
    expect((await getCommand(cmd.id)).state.value).toBe("ERROR");
    expect((await getDevice(LOCKER)).state.value).toBe("UNLOCKED");
  });

  it("keeps a command that timed out in ERROR when a late SUCCESS arrives, records it, and follows the hardware", async () => {
    const cmd = await post(LOCKER, { command: "lock" });
    h.clock.advance(DELIVERY_MS);
    await h.sweep();
    const failed = await getCommand(cmd.id);
    expect(failed.state.value).toBe("ERROR");
    expect((await getDevice(LOCKER)).state.value).toBe("UNLOCKED");

    h.clock.advance(1_000);
    expect(await progress("gw-a1", cmd, "SUCCESS", { lock_state: "LOCKED" })).toBe("applied");
    const late = await getCommand(cmd.id);
    expect(late.state).toEqual(failed.state);
    expect(late.events.slice(0, -1)).toEqual(failed.events);
    expect(late.events.at(-1)).toMatchObject({
      name: "RESPONSE_DEVICE_LOCKED",
      value: "reported after the command had ended",
    });
    // The latch is locked whatever the command's fate: the device is in use.
    const d = await getDevice(LOCKER);
    expect(d.state).toMatchObject({ value: "LOCKED", timeout_at: null });
    expect(d.lock_state).toBe("LOCKED");

    await progress("gw-a1", cmd, "RECEIVED");
    await progress("gw-a1", cmd, "SUCCESS", { lock_state: "LOCKED" });
    expect(await getCommand(cmd.id)).toEqual(late);
  });
});

describe("gateway errors, repeats and strangers", () => {
  it("ends the command in ERROR with the gateway's reason and returns the device to its previous state", async () => {
    const cmd = await post(LOCKER, { command: "lock", user_id: RIDER });
    await progress("gw-a1", cmd, "RECEIVED");
    h.clock.advance(2_000);
    expect(await progress("gw-a1", cmd, "ERROR", { reason: "latch jammed" })).toBe("applied");
    const failed = await getCommand(cmd.id);
    expect(failed.state).toEqual({ value: "ERROR", reason: "latch jammed", timeout_at: null });
    expect(failed.events.at(-1)).toEqual({
      name: "RESPONSE_ERROR",
      value: "latch jammed",
      timestamp: iso(nowMs()),
    });
    const d = await getDevice(LOCKER);
    expect(d.state).toEqual({ value: "UNLOCKED", changed_at: iso(nowMs()), timeout_at: null });
    expect(d.user).toBeNull();
  });

  it("returns a locker whose unlock fails to LOCKED, keeping its occupant", async () => {
    const lock = await post(LOCKER, { command: "lock", user_id: RIDER });
    await progress("gw-a1", lock, "SUCCESS", { lock_state: "LOCKED" });
    h.clock.advance(THROTTLE_MS);
    const unlock = await post(LOCKER, { command: "unlock" });
    await progress("gw-a1", unlock, "ERROR", { reason: "latch jammed" });
    expect((await getCommand(unlock.id)).state.reason).toBe("latch jammed");
    const d = await getDevice(LOCKER);
    expect(d.state).toMatchObject({ value: "LOCKED", timeout_at: null });
    expect(d.user?.id).toBe(RIDER);
  });

  it("applies a repeated report (same seq) once", async () => {
    const cmd = await post(LOCKER, { command: "lock" });
    const reportSeq = nextSeq();
    expect(await progress("gw-a1", cmd, "RECEIVED", { seq: reportSeq })).toBe("applied");
    const once = await getCommand(cmd.id);
    const deviceOnce = await getDevice(LOCKER);

    h.clock.advance(5_000);
    expect(await progress("gw-a1", cmd, "RECEIVED", { seq: reportSeq })).toBe("duplicate");
    expect(await getCommand(cmd.id)).toEqual(once);
    expect((await getDevice(LOCKER)).state).toEqual(deviceOnce.state);

    const successSeq = nextSeq();
    expect(await progress("gw-a1", cmd, "SUCCESS", { seq: successSeq, lock_state: "LOCKED" })).toBe(
      "applied",
    );
    expect(await progress("gw-a1", cmd, "SUCCESS", { seq: successSeq, lock_state: "LOCKED" })).toBe(
      "duplicate",
    );
    const done = await getCommand(cmd.id);
    expect(names(done).filter((n) => n === "RESPONSE_DEVICE_LOCKED")).toHaveLength(1);
    expect(names(done).filter((n) => n === "RESPONSE_COMMAND_RECEIVED")).toHaveLength(1);
  });

  it("ignores a second RECEIVED with a new seq: the hardware deadline is not pushed back", async () => {
    const cmd = await post(LOCKER, { command: "lock" });
    await progress("gw-a1", cmd, "RECEIVED");
    const first = await getCommand(cmd.id);
    h.clock.advance(5_000);
    await progress("gw-a1", cmd, "RECEIVED");
    expect(await getCommand(cmd.id)).toEqual(first);
  });

  it.each([
    ["another gateway of the same operator", "gw-a2"],
    ["another operator's gateway", "gw-b1"],
  ])("changes nothing when %s reports progress on the command", async (_label, gatewayId) => {
    const cmd = await post(LOCKER, { command: "lock" });
    const before = { command: await getCommand(cmd.id), device: await getDevice(LOCKER) };
    for (const state of ["RECEIVED", "SUCCESS", "ERROR"] as const) {
      await progress(gatewayId, cmd, state, { lock_state: "LOCKED", reason: "spoofed" });
    }
    expect(await getCommand(cmd.id)).toEqual(before.command);
    expect(await getDevice(LOCKER)).toEqual(before.device);
  });

  it("changes nothing when the right gateway names another device for the command", async () => {
    const cmd = await post(LOCKER, { command: "lock" });
    const before = { command: await getCommand(cmd.id), device: await getDevice(LOCKER) };
    await progress("gw-a1", cmd, "SUCCESS", { device_id: fx.device("L1", "2"), lock_state: "LOCKED" });
    expect(await getCommand(cmd.id)).toEqual(before.command);
    expect(await getDevice(LOCKER)).toEqual(before.device);
    expect((await getDevice(fx.device("L1", "2"))).state.value).toBe("UNLOCKED");
  });
});

describe("force-unlock", () => {
  it("supersedes an in-flight unlock: the earlier command ends in ERROR and a late report from it moves nothing", async () => {
    await lockedLocker();
    const unlock = await post(LOCKER, { command: "unlock" });
    expect((await getDevice(LOCKER)).state.value).toBe("UNLOCKING");

    h.clock.advance(THROTTLE_MS);
    const force = await post(LOCKER, { command: "force-unlock", reason: "MAINTENANCE" });
    expect(force.state.value).toBe("SENT");
    const superseded = await getCommand(unlock.id);
    expect(superseded.state.value).toBe("ERROR");
    expect(superseded.state.reason).toMatch(/^superseded/);
    expect(superseded.state.reason).toContain("force-unlock");
    expect(superseded.state.timeout_at).toBeNull();
    expect(names(superseded).at(-1)).toBe("REQUEST_SUPERSEDED");
    // The gateway learns which command it takes over, so it never starts the superseded one.
    expect(h.gateways.last().request).toMatchObject({
      command_id: force.id,
      name: "force-unlock",
      params: { reason: "MAINTENANCE" },
      supersedes: unlock.id,
    });

    // The hardware had already run the superseded command: it stays ERROR, its history says what happened,
    // and the device stays with the force command.
    await progress("gw-a1", unlock, "SUCCESS", { lock_state: "UNLOCKED" });
    const late = await getCommand(unlock.id);
    expect(late.state).toEqual(superseded.state);
    expect(late.events.at(-1)).toMatchObject({
      name: "RESPONSE_DEVICE_UNLOCKED",
      value: "reported after the command had ended",
    });
    expect((await getDevice(LOCKER)).state.value).toBe("UNLOCKING");

    await progress("gw-a1", force, "SUCCESS", { lock_state: "UNLOCKED" });
    const done = await getCommand(force.id);
    expect(done.state.value).toBe("SUCCESS");
    expect(names(done)).toContain("RESPONSE_DEVICE_UNLOCKED");
    expect((await getDevice(LOCKER)).state).toMatchObject({ value: "UNLOCKED", timeout_at: null });
  });

  it("returns the device to LOCKED, not UNLOCKING, when the superseding force-unlock fails", async () => {
    await lockedLocker();
    await post(LOCKER, { command: "unlock" });
    h.clock.advance(THROTTLE_MS);
    const force = await post(LOCKER, { command: "force-unlock", reason: "TESTING" });
    await progress("gw-a1", force, "ERROR", { reason: "no power" });
    expect((await getCommand(force.id)).state).toMatchObject({ value: "ERROR", reason: "no power" });
    expect((await getDevice(LOCKER)).state).toMatchObject({ value: "LOCKED", timeout_at: null });
  });

  it("supersedes an in-flight lock and frees the locker", async () => {
    const lock = await post(LOCKER, { command: "lock" });
    h.clock.advance(THROTTLE_MS);
    const force = await post(LOCKER, { command: "force-unlock", reason: "STUCK_USER_APP_ISSUE" });
    expect((await getCommand(lock.id)).state.value).toBe("ERROR");
    await progress("gw-a1", force, "SUCCESS", { lock_state: "UNLOCKED" });
    expect((await getDevice(LOCKER)).state).toMatchObject({ value: "UNLOCKED", timeout_at: null });
  });
});

describe("bookings travel to the gateway", () => {
  it("answers a book with SENT and the delivery deadline; the locker is ALLOCATED until its gateway records the booking, then BOOKED", async () => {
    const t0 = nowMs();
    const until = iso(t0 + 20 * 60_000);
    const cmd = await post(LOCKER, { command: "book", timeout_at: until }, CLIENTS.basic);
    expect(cmd.state).toEqual({ value: "SENT", reason: "", timeout_at: iso(t0 + DELIVERY_MS) });
    expect(names(cmd)).toEqual(["REQUEST_INITIATED", "REQUEST_SENT"]);
    // The gateway is told who holds the booking and until when, so local access can honour it.
    const wire = WireCommandRequest.parse(h.gateways.last().request);
    expect(h.gateways.last().gatewayId).toBe("gw-a1");
    expect(wire).toMatchObject({
      command_id: cmd.id,
      device_id: LOCKER,
      name: "book",
      params: { booking: { holder: CLIENTS.basic, until } },
      expires_at: iso(t0 + DELIVERY_MS),
    });
    expect((await getDevice(LOCKER)).state).toEqual({
      value: "ALLOCATED",
      changed_at: iso(t0),
      timeout_at: iso(t0 + DELIVERY_MS),
    });

    h.clock.advance(1_000);
    await progress("gw-a1", cmd, "RECEIVED");
    expect((await getDevice(LOCKER)).state).toMatchObject({
      value: "ALLOCATED",
      timeout_at: iso(nowMs() + HARDWARE_MS),
    });
    expect(await succeeded(cmd)).toEqual([
      "REQUEST_INITIATED",
      "REQUEST_SENT",
      "RESPONSE_COMMAND_RECEIVED",
      "STATE_BOOKED",
    ]);
    expect((await getDevice(LOCKER)).state).toEqual({
      value: "BOOKED",
      changed_at: iso(nowMs()),
      timeout_at: until,
    });
  });

  it("holds the locker for the booker while the book is in flight: no one else books or locks it", async () => {
    await post(LOCKER, { command: "book" }, CLIENTS.basic);
    for (const command of ["book", "lock"]) {
      const res = await h.call(CLIENTS.admin, {
        method: "POST",
        url: `/device/v1/devices/${LOCKER}/commands`,
        payload: { command },
      });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ error_code: "ERRORS.COMMAND_NOT_ALLOWED_IN_STATE" });
    }
  });

  it("ends a book its gateway never acknowledges in ERROR at the delivery deadline; the locker is available again", async () => {
    const t0 = nowMs();
    const cmd = await post(LOCKER, { command: "book" });
    h.clock.advance(DELIVERY_MS);
    expect(await h.sweep()).toBeGreaterThanOrEqual(1);
    const failed = await getCommand(cmd.id);
    expect(failed.state.value).toBe("ERROR");
    expect(names(failed)).toEqual(["REQUEST_INITIATED", "REQUEST_SENT", "REQUEST_TIMED_OUT"]);
    expect((await getDevice(LOCKER)).state).toEqual({
      value: "UNLOCKED",
      changed_at: iso(t0 + DELIVERY_MS),
      timeout_at: null,
    });
    // A late SUCCESS changes nothing: the booking was never made as far as the API is concerned.
    await progress("gw-a1", cmd, "SUCCESS");
    expect((await getCommand(cmd.id)).state.value).toBe("ERROR");
    expect((await getDevice(LOCKER)).state.value).toBe("UNLOCKED");
  });

  it("returns the locker to UNLOCKED and forgets the booker when the gateway refuses the book", async () => {
    const cmd = await post(LOCKER, { command: "book" }, CLIENTS.basic);
    await progress("gw-a1", cmd, "ERROR", { reason: "the booking had already ended" });
    expect((await getCommand(cmd.id)).state).toMatchObject({
      value: "ERROR",
      reason: "the booking had already ended",
    });
    expect((await getDevice(LOCKER)).state).toMatchObject({ value: "UNLOCKED", timeout_at: null });
    expect((await deviceRepository(h.db).find(LOCKER))?.booked_by).toBeNull();
  });

  it("leaves the locker UNLOCKED when the booking ended before its gateway confirmed it", async () => {
    const cmd = await post(LOCKER, { command: "book", timeout_at: iso(nowMs() + 5_000) });
    h.clock.advance(5_000);
    await progress("gw-a1", cmd, "SUCCESS");
    expect((await getCommand(cmd.id)).state.value).toBe("SUCCESS");
    expect((await getDevice(LOCKER)).state).toMatchObject({ value: "UNLOCKED", timeout_at: null });
  });

  it("a force command supersedes a book in flight, on the wire too", async () => {
    const book = await post(LOCKER, { command: "book" });
    const force = await post(LOCKER, { command: "force-lock" });
    expect(h.gateways.last().request.supersedes).toBe(book.id);
    const superseded = await getCommand(book.id);
    expect(superseded.state.value).toBe("ERROR");
    expect(names(superseded).at(-1)).toBe("REQUEST_SUPERSEDED");
    await progress("gw-a1", force, "SUCCESS", { lock_state: "LOCKED" });
    expect((await getDevice(LOCKER)).state.value).toBe("LOCKED");
  });

  it("expires a booking when its timeout_at passes and the sweeper runs", async () => {
    const until = nowMs() + 2 * 60_000;
    await bookedLocker({ timeout_at: iso(until) });
    h.clock.advance(60_000);
    await h.sweep();
    expect((await getDevice(LOCKER)).state).toMatchObject({ value: "BOOKED", timeout_at: iso(until) });
    h.clock.advance(until - nowMs());
    expect(await h.sweep()).toBe(1);
    expect((await getDevice(LOCKER)).state).toEqual({
      value: "UNLOCKED",
      changed_at: iso(until),
      timeout_at: null,
    });
    // The locker is free for the next booking.
    await bookedLocker();
  });

  it("expires a default booking one hour after the command, not after its gateway confirmed it", async () => {
    const t0 = nowMs();
    const cmd = await post(LOCKER, { command: "book" });
    h.clock.advance(5_000);
    await progress("gw-a1", cmd, "SUCCESS");
    h.clock.advance(60 * 60 * 1000 - 5_000);
    await h.sweep();
    // Tokens live one hour on the fake clock too, so read the device repository.
    const device = await deviceRepository(h.db).find(LOCKER);
    expect(device?.state).toMatchObject({
      value: "UNLOCKED",
      timeout_at: null,
      changed_at: iso(t0 + 60 * 60 * 1000),
    });
    expect(device?.booked_by).toBeNull();
  });

  it("cancels a booking through the gateway: BOOKED until it confirms, then UNLOCKED with STATE_BOOKING_CANCELLED", async () => {
    await bookedLocker({}, CLIENTS.basic);
    h.clock.advance(1_000);
    const t0 = nowMs();
    const cmd = await post(LOCKER, { command: "cancel-booking" }, CLIENTS.basic);
    expect(cmd.state).toEqual({ value: "SENT", reason: "", timeout_at: iso(t0 + DELIVERY_MS) });
    expect(h.gateways.last().request).toMatchObject({ name: "cancel-booking", command_id: cmd.id });
    expect((await getDevice(LOCKER)).state.value).toBe("BOOKED");
    h.clock.advance(1_000);
    expect(await succeeded(cmd)).toEqual(["REQUEST_INITIATED", "REQUEST_SENT", "STATE_BOOKING_CANCELLED"]);
    expect((await getDevice(LOCKER)).state).toEqual({
      value: "UNLOCKED",
      changed_at: iso(nowMs()),
      timeout_at: null,
    });
  });

  it("keeps the booking when a cancel fails, so the booker can cancel again", async () => {
    await bookedLocker({}, CLIENTS.basic);
    const cmd = await post(LOCKER, { command: "cancel-booking" }, CLIENTS.basic);
    h.clock.advance(DELIVERY_MS);
    await h.sweep();
    expect((await getCommand(cmd.id)).state.value).toBe("ERROR");
    expect((await getDevice(LOCKER)).state.value).toBe("BOOKED");
    const again = await post(LOCKER, { command: "cancel-booking" }, CLIENTS.basic);
    await progress("gw-a1", again, "SUCCESS");
    expect((await getDevice(LOCKER)).state.value).toBe("UNLOCKED");
  });

  it("lets an admin force-cancel another caller's booking", async () => {
    await bookedLocker({}, CLIENTS.basic);
    const cmd = await post(LOCKER, { command: "force-cancel-booking" }, CLIENTS.admin);
    expect(cmd.state.value).toBe("SENT");
    expect(h.gateways.last().request).toMatchObject({ name: "force-cancel-booking", command_id: cmd.id });
    await progress("gw-a1", cmd, "SUCCESS");
    expect(names(await getCommand(cmd.id))).toContain("STATE_BOOKING_CANCELLED");
    expect((await getDevice(LOCKER)).state).toMatchObject({ value: "UNLOCKED", timeout_at: null });
    // Nothing is left of the booking: the old booker cannot cancel it again.
    const again = await h.call(CLIENTS.basic, {
      method: "POST",
      url: `/device/v1/devices/${LOCKER}/commands`,
      payload: { command: "cancel-booking" },
    });
    expect(again.statusCode).toBe(400);
    expect(again.json().error_code).toBe("ERRORS.COMMAND_NOT_ALLOWED_IN_STATE");
  });

  it("a force-cancel confirmed under a lock in flight drops the booking the lock would fall back to", async () => {
    await bookedLocker({}, CLIENTS.basic);
    const lock = await post(LOCKER, { command: "lock" }, CLIENTS.basic);
    const cancel = await post(LOCKER, { command: "force-cancel-booking" }, CLIENTS.admin);
    // It does not take the device from the lock.
    expect(h.gateways.last().request.supersedes).toBeUndefined();
    await progress("gw-a1", cancel, "SUCCESS");
    expect((await getDevice(LOCKER)).state.value).toBe("ALLOCATED");
    await progress("gw-a1", lock, "ERROR", { reason: "latch jammed", lock_state: "UNLOCKED" });
    expect((await getDevice(LOCKER)).state).toMatchObject({ value: "UNLOCKED", timeout_at: null });
  });
});

describe("doors", () => {
  it.each([
    ["BIKE_HOUSE_DOOR", DOOR],
    ["DOOR", LEGACY_DOOR],
  ])(
    "releases a %s: UNLOCKING → SUCCESS → UNLOCKED with a release timeout, then re-locks when it passes",
    async (_type, door) => {
      const t0 = nowMs();
      const cmd = await post(door, { command: "unlock" });
      expect(cmd.state.value).toBe("SENT");
      expect(h.gateways.last()).toMatchObject({
        gatewayId: "gw-a3",
        request: { name: "unlock", device_id: door },
      });
      expect((await getDevice(door)).state).toEqual({
        value: "UNLOCKING",
        changed_at: iso(t0),
        timeout_at: iso(t0 + DELIVERY_MS + HARDWARE_MS),
      });

      h.clock.advance(500);
      await progress("gw-a3", cmd, "RECEIVED");
      expect((await getDevice(door)).state.value).toBe("UNLOCKING");

      h.clock.advance(500);
      const tReleased = nowMs();
      await progress("gw-a3", cmd, "SUCCESS", { lock_state: "UNLOCKED" });
      const done = await getCommand(cmd.id);
      expect(done.state.value).toBe("SUCCESS");
      expect(names(done)).toContain("RESPONSE_DEVICE_UNLOCKED");
      const released = await getDevice(door);
      expect(released.state).toEqual({
        value: "UNLOCKED",
        changed_at: iso(tReleased),
        timeout_at: iso(tReleased + DOOR_RELEASE_MS),
      });
      expect(released.lock_state).toBe("UNLOCKED");

      h.clock.advance(DOOR_RELEASE_MS - 1);
      await h.sweep();
      expect((await getDevice(door)).state.value).toBe("UNLOCKED");

      // The window is over but the lock still reads released (a door held open): no guessed re-lock.
      h.clock.advance(1);
      expect(await h.sweep()).toBe(1);
      expect((await getDevice(door)).state).toEqual({
        value: "UNLOCKED",
        changed_at: iso(tReleased),
        timeout_at: null,
      });

      // The hardware reports the lock engaged again: the door is LOCKED.
      h.clock.advance(2_000);
      await deviceState("gw-a3", door, { lock_state: "LOCKED" });
      expect((await getDevice(door)).state).toEqual({
        value: "LOCKED",
        changed_at: iso(nowMs()),
        timeout_at: null,
      });
    },
  );

  it.each([
    ["BIKE_HOUSE_DOOR", DOOR],
    ["DOOR", LEGACY_DOOR],
  ])(
    "shows a %s a card released as UNLOCKED until it re-locks, as when the unlock command released it",
    async (_type, door) => {
      expect((await getDevice(door)).state).toMatchObject({ value: "LOCKED", timeout_at: null });
      // What the gateway sends for a granted tap: the decision, then the door's reading with cause "tap".
      await h.report("gw-a3", {
        type: "access_decision",
        gateway_id: "gw-a3",
        seq: nextSeq(),
        observed_at: h.clock.now().toISOString(),
        reader: "reader-door",
        device_id: door,
        card_id: "04a1b2c3",
        granted: true,
        action: "unlock",
        reason: "whitelisted",
        whitelist_id: null,
        decided_by: "local",
        actuated: true,
      });
      h.clock.advance(5);
      const tReleased = nowMs();
      await deviceState("gw-a3", door, { lock_state: "UNLOCKED", cause: "tap" });
      const released = await getDevice(door);
      expect(released.state).toEqual({
        value: "UNLOCKED",
        changed_at: iso(tReleased),
        timeout_at: iso(tReleased + DOOR_RELEASE_MS),
      });
      expect(released.lock_state).toBe("UNLOCKED");

      // A second tap while it is released: the gateway starts its window again, and so does the cloud.
      h.clock.advance(4_000);
      const tAgain = nowMs();
      await deviceState("gw-a3", door, { lock_state: "UNLOCKED", cause: "tap" });
      expect((await getDevice(door)).state).toEqual({
        value: "UNLOCKED",
        changed_at: iso(tReleased),
        timeout_at: iso(tAgain + DOOR_RELEASE_MS),
      });

      // Nothing happens before it is due; the gateway's re-lock report then settles it.
      h.clock.advance(DOOR_RELEASE_MS - 1);
      await h.sweep();
      expect((await getDevice(door)).state.value).toBe("UNLOCKED");
      h.clock.advance(1);
      await deviceState("gw-a3", door, { lock_state: "LOCKED", cause: "door_relock" });
      expect((await getDevice(door)).state).toEqual({
        value: "LOCKED",
        changed_at: iso(nowMs()),
        timeout_at: null,
      });
    },
  );

  it("a door found released without a tap (a technician, a held door) predicts no re-lock", async () => {
    await deviceState("gw-a3", DOOR, {
      lock_state: "UNLOCKED",
      cause: "technician",
      detail: "unlock by bob",
    });
    expect((await getDevice(DOOR)).state).toMatchObject({ value: "UNLOCKED", timeout_at: null });
  });

  it("a tap's reading during an unlock command in flight leaves the state to the command", async () => {
    const cmd = await post(DOOR, { command: "unlock" });
    await deviceState("gw-a3", DOOR, { lock_state: "UNLOCKED", cause: "tap" });
    expect((await getDevice(DOOR)).state.value).toBe("UNLOCKING");
    await progress("gw-a3", cmd, "SUCCESS", { lock_state: "UNLOCKED" });
    expect((await getDevice(DOOR)).state).toMatchObject({
      value: "UNLOCKED",
      timeout_at: iso(nowMs() + DOOR_RELEASE_MS),
    });
  });

  it("re-locks a released door at the end of its window when no reading says otherwise", async () => {
    const cmd = await post(DOOR, { command: "unlock" });
    await progress("gw-a3", cmd, "SUCCESS");
    const released = await getDevice(DOOR);
    expect(released.state.value).toBe("UNLOCKED");
    h.clock.advance(DOOR_RELEASE_MS);
    expect(await h.sweep()).toBe(1);
    expect((await getDevice(DOOR)).state).toMatchObject({ value: "LOCKED", timeout_at: null });
  });

  it("returns a door whose release times out to LOCKED", async () => {
    const cmd = await post(DOOR, { command: "unlock" });
    h.clock.advance(DELIVERY_MS);
    await h.sweep();
    expect((await getCommand(cmd.id)).state.value).toBe("ERROR");
    expect((await getDevice(DOOR)).state).toMatchObject({ value: "LOCKED", timeout_at: null });
  });
});

describe("commands that do not move the device state", () => {
  it("sends sync-device to the gateway and reaches SUCCESS on report without changing the device state", async () => {
    await lockedLocker();
    const before = await getDevice(LOCKER);
    const cmd = await post(LOCKER, { command: "sync-device", power_cycle: true });
    expect(cmd.state.value).toBe("SENT");
    expect(h.gateways.last()).toMatchObject({
      gatewayId: "gw-a1",
      request: { command_id: cmd.id, device_id: LOCKER, name: "sync-device", params: { power_cycle: true } },
    });
    expect((await getDevice(LOCKER)).state).toEqual(before.state);

    await progress("gw-a1", cmd, "RECEIVED");
    expect((await getDevice(LOCKER)).state).toEqual(before.state);
    expect(await succeeded(cmd)).toEqual([
      "REQUEST_INITIATED",
      "REQUEST_SENT",
      "RESPONSE_COMMAND_RECEIVED",
      "RESPONSE_DEVICE_SYNCED",
    ]);
    const after = await getDevice(LOCKER);
    expect(after.state).toEqual(before.state);
    expect(after.lock_state).toBe("LOCKED");
  });

  it("sends take-photo to the camera GUARD's gateway and reaches SUCCESS on report without changing its state", async () => {
    const before = await getDevice(CAMERA_GUARD);
    const cmd = await post(CAMERA_GUARD, { command: "take-photo" });
    expect(cmd.state.value).toBe("SENT");
    expect(h.gateways.last()).toMatchObject({
      gatewayId: "gw-a1",
      request: { command_id: cmd.id, device_id: CAMERA_GUARD, name: "take-photo" },
    });
    expect(await succeeded(cmd)).toEqual(["REQUEST_INITIATED", "REQUEST_SENT", "RESPONSE_PHOTO_TAKEN"]);
    expect((await getDevice(CAMERA_GUARD)).state).toEqual(before.state);
  });

  it("leaves the device as it was when a sync-device times out", async () => {
    const before = await getDevice(LOCKER);
    const cmd = await post(LOCKER, { command: "sync-device" });
    h.clock.advance(DELIVERY_MS);
    await h.sweep();
    expect((await getCommand(cmd.id)).state.value).toBe("ERROR");
    expect((await getDevice(LOCKER)).state).toEqual(before.state);
  });

  it("does not disturb an in-flight lock: the lock still completes after a sync-device", async () => {
    const lock = await post(LOCKER, { command: "lock" });
    h.clock.advance(THROTTLE_MS);
    const sync = await post(LOCKER, { command: "sync-device" });
    await progress("gw-a1", sync, "SUCCESS");
    expect((await getDevice(LOCKER)).state.value).toBe("ALLOCATED");
    await progress("gw-a1", lock, "SUCCESS", { lock_state: "LOCKED" });
    expect((await getDevice(LOCKER)).state.value).toBe("LOCKED");
  });
});
