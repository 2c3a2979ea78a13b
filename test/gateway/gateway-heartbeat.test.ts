import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import pino from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { parseGatewayConfig } from "../../gateway/config.ts";
import { startGateway } from "../../gateway/gateway.ts";
import { createSimSite } from "../../hardware-sim/site.ts";
import { packageVersion } from "../../shared/node/version.ts";
import type { DeviceMap, Heartbeat } from "../../shared/wire/messages.ts";
import { eventually } from "../support/eventually.ts";
import { FakeClock } from "../support/fake-clock.ts";
import { StandInBrokerLink } from "../support/stand-in-broker-link.ts";

const log = pino({ level: process.env.TEST_LOG_LEVEL ?? "silent" });
const GW = "gw-heartbeat";
const LOCKER = "20000000-0000-4000-8000-000000000001";
const MAP: DeviceMap = {
  gateway_id: GW,
  version: "m1",
  devices: [
    { device_id: LOCKER, type: "LOCKER", alias: "1", bus: { board: 1, channel: 1 }, has_camera: false },
  ],
};
/** Long enough that no interval heartbeat falls inside a test: the fake clock never gets there. */
const INTERVAL_S = 60;

let cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanup.reverse()) await c();
  cleanup = [];
});

async function rig() {
  const clock = new FakeClock();
  const dir = mkdtempSync(path.join(tmpdir(), "gw-heartbeat-"));
  const sim = createSimSite(
    { moveMs: 0, buses: { bus0: { boards: [{ address: 1, channels: 1, latch: "unlocked" }] } } },
    { timers: clock },
  );
  const link = new StandInBrokerLink(clock, GW);
  const gateway = await startGateway({
    config: parseGatewayConfig({
      gateway_id: GW,
      secret: "heartbeat-test-secret",
      broker: { url: "mqtt://127.0.0.1:1", prefix: "t" },
      state_dir: path.join(dir, "state"),
      buses: [{ name: "bus0", path: "sim://bus0", boards: [1] }],
      heartbeat_interval_s: INTERVAL_S,
      sensor_sweep: null,
      key_sweep: null,
      log_level: "silent",
    }),
    secret: "heartbeat-test-secret",
    clock,
    log,
    openLink: (p) => sim.linkFactory(p),
    brokerLink: () => link,
    controlSocket: false,
  });
  cleanup.push(async () => {
    await gateway.stop();
    await sim.close();
    rmSync(dir, { recursive: true, force: true });
  });
  /** The locker's reachability in the latest heartbeat (undefined: not in it, or none sent yet). */
  const lastSaid = (): boolean | undefined =>
    link.heartbeats.at(-1)?.devices.find((d: Heartbeat["devices"][number]) => d.device_id === LOCKER)
      ?.reachable;
  return { clock, sim, link, lastSaid, gateway };
}

describe("heartbeats go at once when there is news, not only each interval", () => {
  it("on connecting, on a new device map, and when a board stops answering and answers again", async () => {
    const { clock, sim, link, lastSaid } = await rig();
    link.connect();
    expect(link.heartbeats).toHaveLength(1); // the session is up: the gateway is alive, with no map yet
    expect(link.heartbeats[0]?.devices).toEqual([]);

    link.sendMap(MAP);
    // The board answered its first ping when the bus opened: the map's locker is reported reachable at once.
    await eventually(() => expect(lastSaid()).toBe(true));

    const before = link.heartbeats.length;
    await sim.bus("bus0").unplug();
    await eventually(() => expect(lastSaid()).toBe(false));
    expect(link.heartbeats.length).toBe(before + 1);

    await sim.bus("bus0").plugIn();
    clock.advance(500); // the bus's first reopen attempt (its backoff), far short of the heartbeat interval
    await eventually(() => expect(lastSaid()).toBe(true));
    expect(link.heartbeats.length).toBe(before + 2);
  });
});

describe("heartbeats say where the outbox stands", () => {
  it("its identity, which every message carries, and the lowest seq it may still send", async () => {
    const { clock, link } = await rig();
    link.connect();
    const first = link.heartbeats[0]?.outbox;
    expect(first).toEqual({ id: expect.stringMatching(/^[0-9a-f-]{36}$/), unconfirmed_from: 1, depth: 0 });
    link.sendMap(MAP); // the locker's first reading goes up the outbox, and the stand-in confirms it
    await eventually(() => {
      clock.advance(INTERVAL_S * 1000); // an interval heartbeat
      expect(link.up.length).toBeGreaterThan(0);
      const last = Math.max(...link.up.map((m) => m.seq));
      expect(link.heartbeats.at(-1)?.outbox).toEqual({ id: first?.id, unconfirmed_from: last + 1, depth: 0 });
    });
    expect(link.up.every((m) => m.outbox_id === first?.id)).toBe(true);
  });
});

describe("heartbeats say how deep the outbox is, and which daemon runs since when", () => {
  it("what piled up while the broker was away is counted on reconnecting, and nothing once the cloud confirmed it", async () => {
    const { clock, sim, link, gateway } = await rig();
    const startedAt = clock.now().toISOString();
    link.connect();
    expect(link.heartbeats[0]?.runtime).toEqual({ version: packageVersion(), started_at: startedAt });
    link.sendMap(MAP);
    await eventually(() => expect(link.up.length).toBeGreaterThan(0)); // the locker's first reading
    const pendingNow = async () => (await gateway.control.status()).outbox.pending;
    await eventually(async () => expect(await pendingNow()).toBe(0)); // the stand-in confirmed it

    link.disconnect();
    const board = sim.board("bus0", 1);
    for (const event of ["door_opened", "door_closed", "door_opened", "door_closed"] as const) {
      board.event(1, event);
      clock.advance(1_000);
    }
    await eventually(async () => expect(await pendingNow()).toBeGreaterThanOrEqual(4));
    const piled = await pendingNow(); // parkctl's count: the outbox's rows, counted
    const before = link.heartbeats.length;
    link.connect(); // its heartbeat goes at once, before the cloud's acks come back
    expect(link.heartbeats[before]?.outbox?.depth).toBe(piled);
    // The daemon's start stays what it was; only the outbox empties as the cloud confirms.
    expect(link.heartbeats[before]?.runtime).toEqual({ version: packageVersion(), started_at: startedAt });
    await eventually(async () => expect(await pendingNow()).toBe(0));
    clock.advance(INTERVAL_S * 1000); // an interval heartbeat
    expect(link.heartbeats.at(-1)?.outbox?.depth).toBe(0);
  });
});
