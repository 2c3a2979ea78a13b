import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import pino from "pino";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createPhotoFiles } from "../../gateway/adapters/files/photo-files.ts";
import { openGatewayStore } from "../../gateway/adapters/sqlite/gateway-store.ts";
import { DeviceRegistry } from "../../gateway/devices/device-registry.ts";
import { OutboxSensorReadings } from "../../gateway/devices/sensor-readings.ts";
import { createCommandExecutor } from "../../gateway/features/execute-command.ts";
import type { Outcome } from "../../gateway/ports.ts";
import { CloudClock } from "../../gateway/time/cloud-clock.ts";
import type { CommandProgress, CommandRequest } from "../../shared/wire/messages.ts";
import { FakeClock } from "../support/fake-clock.ts";

const GW = "gw-deadlines";
const LOCKER = "11111111-1111-4111-8111-000000000001";
const DAY = 24 * 60 * 60 * 1000;
const OK: Outcome = { ok: true, reason: "", lockState: null, sensors: null };

/** Lets the executor's pending steps run (no time passes). */
const settle = async () => {
  for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
};

let cleanup: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanup.reverse()) c();
  cleanup = [];
});

/** The executor on a real store, with a hand-driven actuator and the cloud's clock learnt from commands. */
function rig(run: () => Promise<Outcome>) {
  const clock = new FakeClock();
  const dir = mkdtempSync(path.join(tmpdir(), "gw-deadlines-"));
  const store = openGatewayStore(dir, { gatewayId: GW, clock });
  cleanup.push(() => {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const registry = new DeviceRegistry();
  registry.replace({
    gateway_id: GW,
    version: "v1",
    devices: [
      { device_id: LOCKER, type: "LOCKER", alias: "1", bus: { board: 1, channel: 1 }, has_camera: false },
    ],
  });
  const actuator = { run: vi.fn(run) };
  const executor = createCommandExecutor({
    store,
    devices: { registry, actuator, sensors: new OutboxSensorReadings(store.outbox, clock) },
    photos: { camera: null, files: createPhotoFiles(path.join(dir, "photos")) },
    clock,
    cloudTime: new CloudClock({ clock, monotonic: clock }),
    log: pino({ level: "silent" }),
  });
  let n = 0;
  const command = (over: Partial<CommandRequest> = {}): CommandRequest => ({
    command_id: `dddddddd-0000-4000-8000-${String(++n).padStart(12, "0")}`,
    device_id: LOCKER,
    name: "lock",
    params: {},
    issued_at: clock.now().toISOString(),
    expires_at: new Date(clock.now().getTime() + 30_000).toISOString(),
    sent_at: clock.now().toISOString(),
    ...over,
  });
  const states = (id: string) =>
    store.outbox
      .pending()
      .filter((m): m is CommandProgress => m.type === "command_progress" && m.command_id === id)
      .map((m) => [m.state, m.reason]);
  return { clock, executor, actuator, command, states };
}

describe("command deadlines on the cloud's clock", () => {
  it("a command whose time runs out while it waits its device's turn is refused, never actuated", async () => {
    let release = (_: Outcome) => {};
    const r = rig(() => new Promise<Outcome>((resolve) => (release = resolve)));
    const first = r.executor.handle(r.command());
    const late = r.command({ expires_at: new Date(r.clock.now().getTime() + 1_000).toISOString() });
    const second = r.executor.handle(late);
    await settle();
    expect(r.states(late.command_id)).toEqual([["RECEIVED", ""]]);
    r.clock.advance(1_000); // the first command holds the device past the second's deadline
    release(OK);
    await Promise.all([first, second]);
    expect(r.actuator.run).toHaveBeenCalledTimes(1);
    expect(r.states(late.command_id).at(-1)).toEqual([
      "ERROR",
      "the command's deadline passed while it waited its turn; not executed",
    ]);
  });

  it("the wall clock set a day on does not expire a command", async () => {
    const r = rig(() => Promise.resolve(OK));
    const cmd = r.command();
    r.clock.setWall(r.clock.now().getTime() + DAY);
    await r.executor.handle(cmd);
    expect(r.actuator.run).toHaveBeenCalledTimes(1);
    expect(r.states(cmd.command_id).at(-1)).toEqual(["SUCCESS", ""]);
  });

  it("the wall clock set a day back does not revive an expired command", async () => {
    const r = rig(() => Promise.resolve(OK));
    const cmd = r.command({ expires_at: r.clock.now().toISOString() });
    r.clock.setWall(r.clock.now().getTime() - DAY);
    await r.executor.handle(cmd);
    expect(r.actuator.run).not.toHaveBeenCalled();
    expect(r.states(cmd.command_id)).toEqual([
      ["ERROR", "the command arrived after its deadline and was not executed"],
    ]);
  });
});
