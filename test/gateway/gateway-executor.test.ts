import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import pino from "pino";
import { afterAll, afterEach, describe, expect, it, vi } from "vitest";
import { createPhotoFiles } from "../../gateway/adapters/files/photo-files.ts";
import { HardwareActuator } from "../../gateway/adapters/hardware/actuator.ts";
import { GpioDoors } from "../../gateway/adapters/hardware/gpio-doors.ts";
import { openGatewayStore } from "../../gateway/adapters/sqlite/gateway-store.ts";
import { DeviceRegistry } from "../../gateway/devices/device-registry.ts";
import { OutboxSensorReadings } from "../../gateway/devices/sensor-readings.ts";
import { createBookingExpiry } from "../../gateway/features/booking-expiry.ts";
import { createCommandExecutor } from "../../gateway/features/execute-command.ts";
import { createStoreSpace } from "../../gateway/features/store-full.ts";
import { LockBusClient } from "../../gateway/lock-bus/lock-bus-client.ts";
import type { Actuator, MappedDevice, Outcome } from "../../gateway/ports.ts";
import { CloudClock } from "../../gateway/time/cloud-clock.ts";
import { defineBehavior } from "../../hardware-sim/behaviors.ts";
import { jam, noReply } from "../../hardware-sim/faults.ts";
import { createSimSite } from "../../hardware-sim/site.ts";
import {
  type CommandProgress,
  type CommandRequest,
  type DeviceMap,
  PHOTO_PART_BYTES,
  type PhotoPart,
} from "../../shared/wire/messages.ts";
import { installDiskFaults } from "../support/disk-full.ts";
import { FakeClock } from "../support/fake-clock.ts";

const log = pino({ level: "silent" });
const GW = "gw-exec";

const LOCKER_1 = "11111111-1111-4111-8111-000000000001";
const LOCKER_2 = "11111111-1111-4111-8111-000000000002";
const CAMERA_LOCKER = "11111111-1111-4111-8111-000000000003";
const DOOR = "11111111-1111-4111-8111-000000000004";
const UNKNOWN = "99999999-9999-4999-8999-999999999999";

const MAP: DeviceMap = {
  gateway_id: GW,
  version: "v1",
  devices: [
    { device_id: LOCKER_1, type: "LOCKER", alias: "1", bus: { board: 1, channel: 1 }, has_camera: false },
    { device_id: LOCKER_2, type: "LOCKER", alias: "2", bus: { board: 1, channel: 2 }, has_camera: false },
    { device_id: CAMERA_LOCKER, type: "LOCKER", alias: "3", bus: { board: 1, channel: 3 }, has_camera: true },
    { device_id: DOOR, type: "BIKE_HOUSE_DOOR", alias: "north", bus: null, has_camera: false },
  ],
};

const settle = async (turns = 20) => {
  for (let i = 0; i < turns; i++) await new Promise((r) => setImmediate(r));
};

let counter = 0;
const newCommandId = () => `cccccccc-0000-4000-8000-${String(++counter).padStart(12, "0")}`;

let cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanup.reverse()) await c();
  cleanup = [];
});

type RigOptions = {
  /** Replaces the simulator-backed actuator with a hand-driven one. */
  actuator?: Actuator;
  stateDir?: string;
  /** What a full state disk refuses is owed here (gateway/features/store-full.ts). */
  storeSpace?: boolean;
};

async function rig(opts: RigOptions = {}) {
  const clock = new FakeClock();
  const stateDir = opts.stateDir ?? mkdtempSync(path.join(tmpdir(), "gw-exec-"));
  // What the full store refused goes in before any later write, as the daemon wires it.
  const owed = { flush: () => {} };
  const store = openGatewayStore(stateDir, { gatewayId: GW, clock, owedFirst: () => owed.flush() });
  const { outbox, commandLog } = store;
  const registry = new DeviceRegistry();
  registry.replace(MAP);

  const site = createSimSite(
    { moveMs: 0, buses: { main: { boards: [{ address: 1, channels: 4 }] } }, doors: ["north"] },
    { timers: clock },
  );
  const bus = new LockBusClient({
    name: "main",
    path: "sim://main",
    baudRate: 115_200,
    openLink: (p, b) => site.linkFactory(p, b),
    clock,
    log,
  });
  await bus.start();
  const doors = new GpioDoors(site.gpio, clock, 5);
  doors.track(MAP.devices);
  // As the daemon's: a locker seen unlocked is no longer parked (a write, refused on a full store).
  const sensors = new OutboxSensorReadings(outbox, clock, (id, latch) => {
    if (latch === "unlocked") store.parkedCards.clear(id);
  });
  const actuator = opts.actuator ?? new HardwareActuator(() => bus, doors, clock, 5);
  const storeSpace = opts.storeSpace ? createStoreSpace({ stateDir, outbox, log }) : undefined;
  if (storeSpace) owed.flush = storeSpace.flush;
  const finished: [string, boolean][] = [];
  const cloudTime = new CloudClock({ clock, monotonic: clock });
  const executor = createCommandExecutor({
    store,
    devices: { registry, actuator, sensors },
    photos: { camera: site.camera, files: createPhotoFiles(path.join(stateDir, "photos")) },
    clock,
    cloudTime,
    log,
    notify: { finished: (name, ok) => finished.push([name, ok]) },
    storeSpace,
  });
  cleanup.push(async () => {
    await bus.stop();
    await site.close();
    store.close();
    if (!opts.stateDir) rmSync(stateDir, { recursive: true, force: true });
  });

  const command = (over: Partial<CommandRequest> = {}): CommandRequest => ({
    command_id: newCommandId(),
    device_id: LOCKER_1,
    name: "lock",
    params: {},
    issued_at: clock.now().toISOString(),
    expires_at: new Date(clock.now().getTime() + 30_000).toISOString(),
    ...over,
  });
  /** Command progress in the outbox for one command, in seq order. */
  const progress = (commandId: string) =>
    outbox
      .pending()
      .filter((m): m is CommandProgress => m.type === "command_progress" && m.command_id === commandId);
  const board = site.board("main", 1);

  return {
    clock,
    stateDir,
    store,
    sensors,
    outbox,
    commandLog,
    registry,
    site,
    board,
    executor,
    command,
    progress,
    finished,
    storeSpace,
    cloudTime,
  };
}

function deferred<T>() {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

describe("command executor: actuating through the simulator", () => {
  it("a lock of a locker a card parked is refused unrun (held by another); a force-lock runs", async () => {
    const r = await rig();
    // The card's tap locked it (the daemon's tap path notes the reading it read).
    r.board.turnLatch(1, "locked");
    r.sensors.note(r.registry.get(LOCKER_1) as MappedDevice, { latch: "locked" });
    r.store.parkedCards.put(LOCKER_1, "a1a1", r.clock.now().toISOString());
    const asked: string[] = [];
    r.board.onRequest((req) => asked.push(req.kind));
    const cmd = r.command({ name: "lock" });
    await r.executor.handle(cmd);
    // The latch it reports is the card's: the cloud must not make the lock's rider its occupant.
    expect(
      r.progress(cmd.command_id).map((m) => [m.state, m.reason, m.lock_state, m.held_by_another]),
    ).toEqual([
      ["RECEIVED", "", undefined, undefined],
      ["ERROR", "in use: an RFID card parked it", "LOCKED", true],
    ]);
    expect(asked).not.toContain("lock");
    const force = r.command({ name: "force-lock" });
    await r.executor.handle(force);
    expect(r.progress(force.command_id).at(-1)?.state).toBe("SUCCESS");
    expect(asked).toContain("lock");
  });

  it("lock: reports RECEIVED then SUCCESS with lock_state LOCKED, and logs SUCCESS", async () => {
    const r = await rig();
    r.board.turnLatch(1, "unlocked");
    await settle();
    const cmd = r.command({ name: "lock" });
    await r.executor.handle(cmd);

    expect(r.board.channel(1).latch).toBe("locked");
    const states = r.progress(cmd.command_id);
    expect(states.map((m) => [m.state, m.lock_state])).toEqual([
      ["RECEIVED", undefined],
      ["SUCCESS", "LOCKED"],
    ]);
    expect(states.map((m) => m.seq)).toEqual([...states.map((m) => m.seq)].sort((a, b) => a - b));
    expect(states[1]).toMatchObject({ gateway_id: GW, device_id: LOCKER_1, reason: "" });
    expect(r.commandLog.get(cmd.command_id)).toMatchObject({
      state: "SUCCESS",
      lock_state: "LOCKED",
      reason: "",
      name: "lock",
    });
    expect(r.finished).toEqual([["lock", true]]);
  });

  it("unlock: moves the latch and reports UNLOCKED", async () => {
    const r = await rig();
    const cmd = r.command({ name: "force-unlock", device_id: LOCKER_2 });
    await r.executor.handle(cmd);
    expect(r.board.channel(2).latch).toBe("unlocked");
    expect(r.progress(cmd.command_id).at(-1)).toMatchObject({ state: "SUCCESS", lock_state: "UNLOCKED" });
  });

  it("a repeated command id is not actuated again; its outcome goes up again without the old latch reading", async () => {
    const r = await rig();
    const cmd = r.command({ name: "unlock" });
    await r.executor.handle(cmd);
    expect(r.board.received).toHaveLength(1);
    // Someone locks it by hand; a second execution would unlock it again.
    r.board.turnLatch(1, "locked");
    await r.executor.handle(cmd);
    expect(r.board.received).toHaveLength(1);
    expect(r.board.channel(1).latch).toBe("locked");
    // The repeat says nothing of the latch: "UNLOCKED" now would be an old reading in a newer place.
    expect(r.progress(cmd.command_id).map((m) => [m.state, m.lock_state])).toEqual([
      ["RECEIVED", undefined],
      ["SUCCESS", "UNLOCKED"],
      ["SUCCESS", undefined],
    ]);
    expect(r.finished).toEqual([["unlock", true]]);
  });

  it("a command past its expires_at is refused with ERROR 'after its deadline' and nothing moves", async () => {
    const r = await rig();
    r.board.turnLatch(1, "unlocked");
    await settle();
    const cmd = r.command({ name: "lock", expires_at: r.clock.now().toISOString() }); // the deadline is now
    await r.executor.handle(cmd);
    expect(r.board.received).toEqual([]);
    expect(r.board.channel(1).latch).toBe("unlocked");
    const states = r.progress(cmd.command_id);
    expect(states).toHaveLength(1);
    expect(states[0]).toMatchObject({ state: "ERROR" });
    expect(states[0]?.reason).toContain("after its deadline");
    expect(r.commandLog.get(cmd.command_id)).toMatchObject({ state: "ERROR" });
    // Redelivered later, it is still not executed, and the refusal is reported again.
    await r.executor.handle(cmd);
    expect(r.board.received).toEqual([]);
    expect(r.progress(cmd.command_id).map((m) => m.state)).toEqual(["ERROR", "ERROR"]);
  });

  it("a command that arrives 1 ms before its deadline is still executed", async () => {
    const r = await rig();
    const cmd = r.command({ name: "sync-device" });
    await r.executor.handle({ ...cmd, expires_at: new Date(r.clock.now().getTime() + 1).toISOString() });
    expect(r.board.received.map((q) => q.kind)).toEqual(["status"]);
    expect(r.progress(cmd.command_id).at(-1)?.state).toBe("SUCCESS");
  });

  it("a command delivered late is judged on the latest the cloud's time can be, not on its late sent_at", async () => {
    const r = await rig();
    const sent = r.clock.now().getTime();
    r.cloudTime.sessionStarted();
    r.clock.advance(4_000); // every message to this gateway is held 4 s: the session's echo too
    r.cloudTime.observe(new Date(sent).toISOString(), true);
    // Sent with 3 s left and held as long: by its sent_at it is in time, by the round trip it may not be.
    const cmd = r.command({ name: "lock", expires_at: new Date(sent + 3_000).toISOString() });
    await r.executor.handle({ ...cmd, sent_at: new Date(sent).toISOString() });
    expect(r.board.received).toEqual([]);
    expect(r.progress(cmd.command_id).map((m) => [m.state, m.reason])).toEqual([
      ["ERROR", "the command arrived after its deadline and was not executed"],
    ]);
    // With time left beyond the round trip's width it runs.
    const later = r.command({ name: "sync-device", expires_at: new Date(sent + 10_000).toISOString() });
    await r.executor.handle(later);
    expect(r.progress(later.command_id).at(-1)?.state).toBe("SUCCESS");
  });

  it("a device not in the device map ends in ERROR without touching the bus", async () => {
    const r = await rig();
    const cmd = r.command({ device_id: UNKNOWN });
    await r.executor.handle(cmd);
    expect(r.board.received).toEqual([]);
    expect(r.progress(cmd.command_id).map((m) => [m.state, m.reason])).toEqual([
      ["RECEIVED", ""],
      ["ERROR", `device ${UNKNOWN} is not driven by this gateway (device map ${MAP.version})`],
    ]);
    expect(r.finished).toEqual([["lock", false]]);
  });

  it("a jammed latch ends in ERROR with the jammed reason", async () => {
    const r = await rig();
    r.board.use(jam(1));
    const cmd = r.command({ name: "unlock" });
    await r.executor.handle(cmd);
    expect(r.board.channel(1).latch).toBe("locked");
    const last = r.progress(cmd.command_id).at(-1);
    expect(last).toMatchObject({ state: "ERROR", reason: "latch jammed: the lock could not engage" });
    expect(r.commandLog.get(cmd.command_id)).toMatchObject({
      state: "ERROR",
      reason: "latch jammed: the lock could not engage",
    });
  });

  it("a board that does not answer ends in ERROR naming the board, after the ACK deadline", async () => {
    const r = await rig();
    r.board.use(noReply());
    const cmd = r.command({ name: "lock" });
    const done = r.executor.handle(cmd);
    await settle();
    expect(r.progress(cmd.command_id).map((m) => m.state)).toEqual(["RECEIVED"]);
    r.clock.advance(250);
    // The lock went unanswered, so the gateway asks where the latch is; that goes unanswered too.
    await settle();
    expect(r.board.received.map((q) => q.kind)).toEqual(["lock", "status"]);
    r.clock.advance(250);
    await done;
    const last = r.progress(cmd.command_id).at(-1);
    expect(last).toMatchObject({ state: "ERROR", reason: "lock board 1 did not answer" });
    expect(last?.lock_state).toBeUndefined();
  });

  it("a movement whose answer was lost is reported with where the latch really is", async () => {
    const r = await rig();
    // The board moves the latch, but neither its ACK nor its result reaches the gateway (a noisy line).
    const lost = new Set(["ack", "lock_result"]);
    r.board.use(
      defineBehavior({
        name: "loseOneExchange",
        onSend: (out, ctx) => {
          if (!out.msg || !lost.delete(out.msg.kind)) return out;
          if (lost.size === 0) ctx.remove();
          return null;
        },
      }),
    );
    const cmd = r.command({ name: "lock" });
    const done = r.executor.handle(cmd);
    await settle();
    r.clock.advance(250);
    await done;
    expect(r.board.channel(1).latch).toBe("locked");
    // ERROR (no confirmation came), but with the latch read afterwards: the cloud settles on LOCKED.
    expect(r.progress(cmd.command_id).at(-1)).toMatchObject({
      state: "ERROR",
      reason: "lock board 1 did not answer",
      lock_state: "LOCKED",
    });
  });

  it("take-photo writes the photo under state_dir/photos and reports SUCCESS", async () => {
    const r = await rig();
    const cmd = r.command({ name: "take-photo", device_id: CAMERA_LOCKER });
    await r.executor.handle(cmd);
    const file = path.join(r.stateDir, "photos", `${cmd.command_id}.jpg`);
    expect(existsSync(file)).toBe(true);
    const bytes = readFileSync(file);
    expect([bytes[0], bytes[1]]).toEqual([0xff, 0xd8]); // JPEG SOI
    expect([bytes.at(-2), bytes.at(-1)]).toEqual([0xff, 0xd9]); // EOI
    const last = r.progress(cmd.command_id).at(-1);
    expect(last).toMatchObject({ state: "SUCCESS", reason: `photo taken (${bytes.length} bytes)` });
    expect(r.site.camera.captures).toBe(1);
  });

  it("take-photo puts the photo in the outbox, in parts, just before its SUCCESS", async () => {
    const r = await rig();
    r.site.camera.setFrameSize(PHOTO_PART_BYTES + 100);
    const cmd = r.command({ name: "take-photo", device_id: CAMERA_LOCKER });
    await r.executor.handle(cmd);
    const mine = r.outbox
      .pending()
      .filter(
        (m): m is PhotoPart | CommandProgress =>
          (m.type === "photo" || m.type === "command_progress") && m.command_id === cmd.command_id,
      );
    expect(mine.map((m) => (m.type === "photo" ? `photo ${m.part}/${m.parts}` : m.state))).toEqual([
      "RECEIVED",
      "photo 1/2",
      "photo 2/2",
      "SUCCESS",
    ]);
    const parts = mine.filter((m): m is PhotoPart => m.type === "photo");
    const sent = Buffer.concat(parts.map((p) => Buffer.from(p.data, "base64")));
    expect(sent.equals(Buffer.from(r.site.camera.last?.bytes ?? []))).toBe(true);
    expect(parts.every((p) => p.device_id === CAMERA_LOCKER && p.mime === "image/jpeg")).toBe(true);
    // A redelivery reports the outcome again, without taking or sending another photo.
    await r.executor.handle(cmd);
    expect(r.site.camera.captures).toBe(1);
    expect(r.outbox.pending().filter((m) => m.type === "photo")).toHaveLength(2);
  });

  it("take-photo on a device without a camera ends in ERROR and writes nothing", async () => {
    const r = await rig();
    const cmd = r.command({ name: "take-photo", device_id: LOCKER_1 });
    await r.executor.handle(cmd);
    expect(r.progress(cmd.command_id).at(-1)).toMatchObject({
      state: "ERROR",
      reason: "no camera on this device",
    });
    expect(existsSync(path.join(r.stateDir, "photos", `${cmd.command_id}.jpg`))).toBe(false);
  });

  it("a camera that fails turns into an ERROR with the gateway's reason, not a crash", async () => {
    const r = await rig();
    r.site.camera.failNext();
    const cmd = r.command({ name: "take-photo", device_id: CAMERA_LOCKER });
    await r.executor.handle(cmd);
    expect(r.progress(cmd.command_id).at(-1)).toMatchObject({
      state: "ERROR",
      reason: "gateway error: camera: capture failed",
    });
    expect(r.commandLog.get(cmd.command_id)?.state).toBe("ERROR");
  });

  it("sync-device with power_cycle sends POWER off, waits a second, POWER on, then STATUS", async () => {
    const r = await rig();
    const cmd = r.command({ name: "sync-device", params: { power_cycle: true } });
    const done = r.executor.handle(cmd);
    await settle();
    expect(r.board.received.map((q) => q.kind)).toEqual(["power"]);
    expect(r.board.channel(1).powered).toBe(false);
    r.clock.advance(999);
    await settle();
    expect(r.board.received).toHaveLength(1);
    r.clock.advance(1);
    await done;
    expect(
      r.board.received.map((q) => (q.kind === "power" ? `power ${q.on ? "on" : "off"}` : q.kind)),
    ).toEqual(["power off", "power on", "status"]);
    expect(r.board.received.every((q) => q.kind === "ping" || q.channel === 1)).toBe(true);
    expect(r.board.channel(1).powered).toBe(true);
    expect(r.progress(cmd.command_id).at(-1)).toMatchObject({ state: "SUCCESS", lock_state: "LOCKED" });
  });

  it("sync-device without power_cycle only asks for STATUS", async () => {
    const r = await rig();
    const cmd = r.command({ name: "sync-device", device_id: LOCKER_2 });
    await r.executor.handle(cmd);
    expect(r.board.received.map((q) => q.kind)).toEqual(["status"]);
    expect(r.progress(cmd.command_id).at(-1)).toMatchObject({ state: "SUCCESS", lock_state: "LOCKED" });
  });

  it("unlocking a GPIO-wired door pulses its strike for door_release_s", async () => {
    const r = await rig();
    const door = r.site.door("north");
    const cmd = r.command({ name: "unlock", device_id: DOOR });
    await r.executor.handle(cmd);
    expect(door.isStrikeReleased).toBe(true);
    expect(r.progress(cmd.command_id).at(-1)).toMatchObject({ state: "SUCCESS", lock_state: "UNLOCKED" });
    r.clock.advance(5_000);
    expect(door.isStrikeReleased).toBe(false);
    expect(door.strikePulses).toBe(1);
  });
});

describe("command executor: bookings are recorded in the gateway's store", () => {
  const HOLDER = "rider-7";
  const inMs = (r: { clock: FakeClock }, ms: number) => new Date(r.clock.now().getTime() + ms).toISOString();
  const book = (
    r: Awaited<ReturnType<typeof rig>>,
    untilMs = 3_600_000,
    over: Partial<CommandRequest> = {},
  ) => r.command({ name: "book", params: { booking: { holder: HOLDER, until: inMs(r, untilMs) } }, ...over });

  it("book records the holder and the end, reports SUCCESS, and sends nothing to the hardware", async () => {
    const r = await rig();
    const cmd = book(r, 3_600_000, {
      params: { booking: { holder: HOLDER, until: "2026-01-15T12:30:00+01:00" } },
    });
    await r.executor.handle(cmd);
    expect(r.progress(cmd.command_id).map((m) => [m.state, m.reason])).toEqual([
      ["RECEIVED", ""],
      ["SUCCESS", ""],
    ]);
    expect(r.store.bookings.active(LOCKER_1, r.clock.now())).toEqual({
      device_id: LOCKER_1,
      holder: HOLDER,
      until: "2026-01-15T11:30:00.000Z",
      command_id: cmd.command_id,
      booked_at: r.clock.now().toISOString(),
    });
    expect(r.board.received).toEqual([]);
    expect(r.finished).toEqual([["book", true]]);
  });

  it("a repeated book is reported again, not recorded again", async () => {
    const r = await rig();
    const cmd = book(r);
    await r.executor.handle(cmd);
    r.store.bookings.clear(LOCKER_1); // ended meanwhile
    await r.executor.handle(cmd);
    expect(r.store.bookings.active(LOCKER_1, r.clock.now())).toBeUndefined();
    expect(r.progress(cmd.command_id).map((m) => m.state)).toEqual(["RECEIVED", "SUCCESS", "SUCCESS"]);
  });

  it("a book whose booking already ended, or that names none, ends in ERROR and records nothing", async () => {
    const r = await rig();
    const late = book(r, 0);
    await r.executor.handle(late);
    expect(r.progress(late.command_id).at(-1)).toMatchObject({
      state: "ERROR",
      reason: "the booking had already ended when it reached the gateway",
    });
    const bare = r.command({ name: "book" });
    await r.executor.handle(bare);
    expect(r.progress(bare.command_id).at(-1)).toMatchObject({
      state: "ERROR",
      reason: expect.stringContaining("without a booking"),
    });
    expect(r.store.bookings.all(r.clock.now())).toEqual([]);
  });

  it("a book for a device this gateway does not drive ends in ERROR and records nothing", async () => {
    const r = await rig();
    const cmd = book(r, 60_000, { device_id: UNKNOWN });
    await r.executor.handle(cmd);
    expect(r.progress(cmd.command_id).at(-1)?.state).toBe("ERROR");
    expect(r.store.bookings.all(r.clock.now())).toEqual([]);
  });

  it.each(["cancel-booking", "force-cancel-booking"] as const)(
    "%s ends the device's booking and only that one",
    async (name) => {
      const r = await rig();
      await r.executor.handle(book(r));
      await r.executor.handle(book(r, 60_000, { device_id: LOCKER_2 }));
      const cancel = r.command({ name });
      await r.executor.handle(cancel);
      expect(r.progress(cancel.command_id).at(-1)).toMatchObject({ state: "SUCCESS", reason: "" });
      expect(r.store.bookings.all(r.clock.now()).map((b) => b.device_id)).toEqual([LOCKER_2]);
      // Nothing left to cancel: still SUCCESS, saying so.
      const again = r.command({ name });
      await r.executor.handle(again);
      expect(r.progress(again.command_id).at(-1)).toMatchObject({
        state: "SUCCESS",
        reason: "no booking was held",
      });
      expect(r.board.received).toEqual([]);
    },
  );

  it("a lock that succeeds ends the device's booking (the device is in use); a failed one keeps it", async () => {
    const run = vi
      .fn<Actuator["run"]>()
      .mockResolvedValueOnce({ ok: false, reason: "latch jammed", lockState: "UNLOCKED", sensors: null })
      .mockResolvedValueOnce({ ok: true, reason: "", lockState: "LOCKED", sensors: null });
    const r = await rig({ actuator: { run } });
    await r.executor.handle(book(r));
    await r.executor.handle(r.command({ name: "lock" }));
    expect(r.store.bookings.active(LOCKER_1, r.clock.now())?.holder).toBe(HOLDER);
    await r.executor.handle(r.command({ name: "force-lock" }));
    expect(r.store.bookings.active(LOCKER_1, r.clock.now())).toBeUndefined();
    expect(run.mock.calls.map((c) => c[1])).toEqual(["lock", "lock"]);
  });

  it("a book interrupted by a crash is reported ERROR at the next start and leaves no booking", async () => {
    const r = await rig();
    const cmd = book(r);
    r.commandLog.record({ ...cmd, state: "RECEIVED", at: r.clock.now().toISOString() });
    expect(r.executor.recoverInterrupted()).toBe(1);
    expect(r.store.bookings.all(r.clock.now())).toEqual([]);
  });

  it("a booking is over at its end on the gateway's clock, and the expiry sweep clears it", async () => {
    const r = await rig();
    const ended: string[] = [];
    const expiry = createBookingExpiry({
      bookings: r.store.bookings,
      clock: r.clock,
      log: { info: (o: { device_id: string }) => ended.push(o.device_id), error: () => {} } as never,
    });
    expiry.start();
    cleanup.push(() => expiry.stop());
    await r.executor.handle(book(r, 90_000));
    await r.executor.handle(book(r, 30_000, { device_id: LOCKER_2 }));
    expiry.changed();
    r.clock.advance(29_999);
    expect(ended).toEqual([]);
    expect(r.store.bookings.active(LOCKER_2, r.clock.now())).toBeDefined();
    r.clock.advance(1);
    expect(ended).toEqual([LOCKER_2]);
    expect(r.store.bookings.all(r.clock.now()).map((b) => b.device_id)).toEqual([LOCKER_1]);
    r.clock.advance(60_000);
    expect(ended).toEqual([LOCKER_2, LOCKER_1]);
    expect(r.store.bookings.nextEnd()).toBeNull();
  });

  it("a full disk keeps no daemon from starting over an ended booking, and its sweep waits before trying again", async () => {
    const r = await rig();
    await r.executor.handle(book(r, 10_000));
    r.clock.advance(10_000);
    const disks = installDiskFaults();
    cleanup.push(() => disks.uninstall());
    disks.set(path.join(r.stateDir, "gateway.db"), true);
    const failures: unknown[] = [];
    const expiry = createBookingExpiry({
      bookings: r.store.bookings,
      clock: r.clock,
      log: { info: () => {}, error: (o: unknown) => failures.push(o) } as never,
      retryMs: 5_000,
    });
    expect(() => expiry.start()).not.toThrow();
    cleanup.push(() => expiry.stop());
    expect(failures).toHaveLength(1);
    expect(r.store.bookings.active(LOCKER_1, r.clock.now())).toBeUndefined();
    r.clock.advance(4_999);
    expect(failures).toHaveLength(1);
    r.clock.advance(1);
    expect(failures).toHaveLength(2);
    disks.set(path.join(r.stateDir, "gateway.db"), false);
    r.clock.advance(5_000);
    expect(failures).toHaveLength(2);
    expect(r.store.bookings.nextEnd()).toBeNull();
  });
});

describe("command executor: with a hand-driven actuator", () => {
  it("a redelivery while the first is still running is ignored: one actuation, one outcome", async () => {
    const gate = deferred<Outcome>();
    const run = vi.fn(() => gate.promise);
    const r = await rig({ actuator: { run } });
    const cmd = r.command({ name: "lock" });
    const first = r.executor.handle(cmd);
    await r.executor.handle(cmd); // returns at once
    await r.executor.handle({ ...cmd });
    expect(run).toHaveBeenCalledTimes(1);
    expect(r.progress(cmd.command_id).map((m) => m.state)).toEqual(["RECEIVED"]);
    gate.resolve({ ok: true, reason: "", lockState: "LOCKED", sensors: null });
    await first;
    expect(run).toHaveBeenCalledTimes(1);
    expect(r.progress(cmd.command_id).map((m) => m.state)).toEqual(["RECEIVED", "SUCCESS"]);
  });

  it("a stopping executor takes no new command and lets the one moving hardware finish and report", async () => {
    const gate = deferred<Outcome>();
    const run = vi.fn(() => gate.promise);
    const r = await rig({ actuator: { run } });
    const moving = r.command({ name: "lock" });
    const first = r.executor.handle(moving);
    await vi.waitFor(() => expect(run).toHaveBeenCalledTimes(1));
    r.executor.close();
    // Delivered while the daemon stops: left to the cloud, which sends it again once the gateway is back.
    const late = r.command({ name: "unlock", device_id: LOCKER_1 });
    await r.executor.handle(late);
    expect(r.progress(late.command_id)).toEqual([]);
    expect(r.commandLog.get(late.command_id)).toBeUndefined();
    let settled = false;
    const draining = r.executor.settled().then(() => {
      settled = true;
    });
    await Promise.resolve();
    expect(settled).toBe(false);
    gate.resolve({ ok: true, reason: "", lockState: "LOCKED", sensors: null });
    await draining;
    await first;
    expect(r.progress(moving.command_id).map((m) => [m.state, m.lock_state])).toEqual([
      ["RECEIVED", undefined],
      ["SUCCESS", "LOCKED"],
    ]);
    expect(run).toHaveBeenCalledTimes(1);
  });

  it("an actuator that throws ends the command in ERROR with a gateway error reason", async () => {
    const run = vi.fn(() => Promise.reject(new Error("bus exploded")));
    const r = await rig({ actuator: { run } });
    const cmd = r.command();
    await r.executor.handle(cmd);
    expect(r.progress(cmd.command_id).at(-1)).toMatchObject({
      state: "ERROR",
      reason: "gateway error: bus exploded",
    });
    // Finished, so a later redelivery is reported, not retried.
    await r.executor.handle(cmd);
    expect(run).toHaveBeenCalledTimes(1);
  });
});

describe("command executor: recoverInterrupted", () => {
  it("turns a RECEIVED entry left by a crash into ERROR 'interrupted' with an outbox message", async () => {
    const r = await rig();
    const crashed = r.command({ name: "unlock", device_id: LOCKER_2 });
    const done = r.command({ name: "lock" });
    r.commandLog.record({ ...crashed, state: "RECEIVED", at: r.clock.now().toISOString() });
    await r.executor.handle(done);

    expect(r.executor.recoverInterrupted()).toBe(1);
    const entry = r.commandLog.get(crashed.command_id);
    expect(entry?.state).toBe("ERROR");
    expect(entry?.reason).toContain("interrupted");
    const msgs = r.progress(crashed.command_id);
    expect(msgs).toHaveLength(1);
    expect(msgs[0]).toMatchObject({ state: "ERROR", device_id: LOCKER_2 });
    expect(msgs[0]?.reason).toContain("interrupted");
    // The finished command is left alone, and a second recovery finds nothing.
    expect(r.commandLog.get(done.command_id)?.state).toBe("SUCCESS");
    expect(r.executor.recoverInterrupted()).toBe(0);
  });

  it("after a restart on the same state directory, the interrupted command is recovered and not re-run", async () => {
    const stateDir = mkdtempSync(path.join(tmpdir(), "gw-exec-restart-"));
    cleanup.push(() => rmSync(stateDir, { recursive: true, force: true }));
    const hang = vi.fn(() => new Promise<Outcome>(() => {}));
    const before = await rig({ actuator: { run: hang }, stateDir });
    const cmd = before.command({ name: "unlock" });
    void before.executor.handle(cmd); // never finishes: the process "dies" here
    await settle();
    expect(before.progress(cmd.command_id).map((m) => m.state)).toEqual(["RECEIVED"]);
    before.store.close();

    const run = vi.fn(() =>
      Promise.resolve<Outcome>({ ok: true, reason: "", lockState: "UNLOCKED", sensors: null }),
    );
    const after = await rig({ actuator: { run }, stateDir });
    expect(after.executor.recoverInterrupted()).toBe(1);
    await after.executor.handle(cmd); // the cloud redelivers it
    expect(run).not.toHaveBeenCalled();
    expect(after.progress(cmd.command_id).map((m) => m.state)).toEqual(["RECEIVED", "ERROR", "ERROR"]);
  });
});

describe("command executor: force commands take over (issue: force commands are honest)", () => {
  /** An actuator whose every run waits for the test to finish it, in order. */
  function gatedActuator() {
    const runs: { action: string; gate: ReturnType<typeof deferred<Outcome>> }[] = [];
    const run = vi.fn((_device: unknown, action: unknown) => {
      const gate = deferred<Outcome>();
      runs.push({ action: String(action), gate });
      return gate.promise;
    });
    const ok = (i: number) =>
      runs[i]?.gate.resolve({ ok: true, reason: "", lockState: "UNLOCKED", sensors: null });
    return { run, runs, ok };
  }

  it("a command superseded before its turn never actuates; the force command runs after the one in progress", async () => {
    const a = gatedActuator();
    const r = await rig({ actuator: { run: a.run } });
    const running = r.command({ name: "lock" });
    const queued = r.command({ name: "unlock" });
    const force = r.command({ name: "force-unlock", supersedes: queued.command_id });
    const done = [running, queued, force].map((c) => r.executor.handle(c));
    await settle();
    expect(a.run).toHaveBeenCalledTimes(1); // one device, one command at a time

    a.ok(0);
    await settle();
    a.ok(1);
    await Promise.all(done);
    expect(a.runs.map((x) => x.action)).toEqual(["lock", "unlock"]); // the lock, then the force-unlock
    expect(r.progress(queued.command_id).map((m) => [m.state, m.reason])).toEqual([
      ["RECEIVED", ""],
      ["ERROR", "superseded by force-unlock; not executed"],
    ]);
    expect(r.progress(force.command_id).at(-1)?.state).toBe("SUCCESS");
    expect(r.progress(running.command_id).at(-1)?.state).toBe("SUCCESS");
  });

  it("a command superseded before it arrived is refused when it does", async () => {
    const a = gatedActuator();
    const r = await rig({ actuator: { run: a.run } });
    const late = r.command({ name: "unlock" });
    const force = r.command({ name: "force-lock", supersedes: late.command_id });
    const forced = r.executor.handle(force);
    await settle();
    a.ok(0);
    await forced;
    await r.executor.handle(late);
    expect(a.run).toHaveBeenCalledTimes(1);
    expect(r.progress(late.command_id)).toEqual([
      expect.objectContaining({ state: "ERROR", reason: "superseded by force-lock before it arrived" }),
    ]);
  });

  it("a command already moving the latch finishes and reports what happened", async () => {
    const a = gatedActuator();
    const r = await rig({ actuator: { run: a.run } });
    const first = r.command({ name: "unlock" });
    const force = r.command({ name: "force-unlock", supersedes: first.command_id });
    const done = [r.executor.handle(first)];
    await settle();
    expect(a.run).toHaveBeenCalledTimes(1); // the unlock is moving the latch
    done.push(r.executor.handle(force));
    await settle();
    a.ok(0);
    await settle();
    a.ok(1);
    await Promise.all(done);
    expect(a.run).toHaveBeenCalledTimes(2);
    expect(r.progress(first.command_id).at(-1)?.state).toBe("SUCCESS");
  });

  it("50 force-unlocks arriving while the first moves the latch: only the first and the last actuate", async () => {
    const a = gatedActuator();
    const r = await rig({ actuator: { run: a.run } });
    const cmds: CommandRequest[] = [];
    for (let i = 0; i < 50; i++)
      cmds.push(r.command({ name: "force-unlock", supersedes: cmds.at(-1)?.command_id }));
    const done = [r.executor.handle(cmds[0]!)];
    await settle();
    for (const c of cmds.slice(1)) done.push(r.executor.handle(c));
    await settle();
    a.ok(0);
    await settle();
    a.ok(1);
    await Promise.all(done);
    expect(a.run).toHaveBeenCalledTimes(2);
    const outcomes = cmds.map((c) => r.progress(c.command_id).at(-1));
    expect(outcomes[0]?.state).toBe("SUCCESS");
    expect(outcomes[49]?.state).toBe("SUCCESS");
    for (const o of outcomes.slice(1, 49)) expect(o).toMatchObject({ state: "ERROR", reason: /^superseded/ });
  });

  it("sync-device reports the reading as a device state before its SUCCESS", async () => {
    const r = await rig();
    r.board.channel(1).latch = "locked";
    r.board.channel(1).itemPresent = true;
    const cmd = r.command({ name: "sync-device" });
    await r.executor.handle(cmd);
    const msgs = r.outbox
      .pending()
      .filter((m) => m.type !== "command_progress" || m.command_id === cmd.command_id);
    const state = msgs.find((m) => m.type === "device_state");
    expect(state).toMatchObject({
      device_id: LOCKER_1,
      lock_state: "LOCKED",
      item_present: true,
      cause: "sync",
    });
    const success = msgs.find((m) => m.type === "command_progress" && m.state === "SUCCESS");
    expect(state!.seq).toBeLessThan(success!.seq);
  });
});

describe("command executor: a full state disk (found by the simulation)", () => {
  const disks = installDiskFaults();
  afterAll(() => disks.uninstall());
  const storeFile = (stateDir: string) => path.join(stateDir, "gateway.db");

  it("a command refused for a full store is not run when delivered again before its ERROR went up", async () => {
    const r = await rig({ storeSpace: true });
    const cmd = r.command({ name: "unlock" });
    disks.set(storeFile(r.stateDir), true);
    await r.executor.handle(cmd);
    disks.set(storeFile(r.stateDir), false);
    await r.executor.handle(cmd); // the cloud delivers it again; the refusal is still owed
    expect(r.board.received).toEqual([]);
    r.storeSpace?.state(); // the heartbeat journals what is owed
    expect(r.progress(cmd.command_id).map((m) => m.state)).toEqual(["ERROR"]);
  });

  it("an outcome the full store could not record goes up with its latch once there is room", async () => {
    let file = "";
    const r = await rig({
      storeSpace: true,
      actuator: {
        run: () => {
          disks.set(file, true); // the disk fills while the latch moves
          return Promise.resolve({ ok: true, reason: "", lockState: "LOCKED", sensors: null });
        },
      },
    });
    file = storeFile(r.stateDir);
    const cmd = r.command({ name: "lock" });
    await r.executor.handle(cmd);
    expect(r.progress(cmd.command_id).map((m) => m.state)).toEqual(["RECEIVED"]);
    disks.set(file, false);
    r.storeSpace?.state();
    expect(r.progress(cmd.command_id).map((m) => [m.state, m.lock_state])).toEqual([
      ["RECEIVED", undefined],
      ["SUCCESS", "LOCKED"],
    ]);
    // Taken in the log, it never runs again.
    await r.executor.handle(cmd);
    expect(r.progress(cmd.command_id)).toHaveLength(2);
  });

  it("a reading after an owed outcome goes up after it, as news against the owed latch", async () => {
    let file = "";
    const r = await rig({
      storeSpace: true,
      actuator: {
        run: () => {
          disks.set(file, true);
          return Promise.resolve({
            ok: true,
            reason: "",
            lockState: "UNLOCKED",
            sensors: { latch: "unlocked" },
          });
        },
      },
    });
    file = storeFile(r.stateDir);
    const locker = r.registry.get(LOCKER_1) as MappedDevice;
    // A card parked it: the unlock's reading releases the card, a write the full store refuses.
    r.sensors.record(locker, { latch: "locked" }, "hardware_event");
    r.store.parkedCards.put(LOCKER_1, "a1a1", r.clock.now().toISOString());
    const cmd = r.command({ name: "force-unlock" });
    await r.executor.handle(cmd);
    disks.set(file, false);
    // Before any heartbeat: a card locks it again, and its reading is the next write.
    r.sensors.record(locker, { latch: "locked" }, "tap");
    const after = r.outbox.pending().filter((m) => m.seq > (r.progress(cmd.command_id)[0]?.seq ?? 0));
    expect(after.map((m) => [m.type, "lock_state" in m ? m.lock_state : undefined])).toEqual([
      ["command_progress", "UNLOCKED"],
      ["device_state", "LOCKED"],
    ]);
  });
});
