import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import pino from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { openGatewayStore } from "../../gateway/adapters/sqlite/gateway-store.ts";
import { parseGatewayConfig } from "../../gateway/config.ts";
import { type RunningGateway, startGateway } from "../../gateway/gateway.ts";
import type { GatewayStore } from "../../gateway/ports.ts";
import { jam } from "../../hardware-sim/faults.ts";
import { createSimSite, type SimSite } from "../../hardware-sim/site.ts";
import type { AccessDecision, DeviceMap, Grant, KeysDown } from "../../shared/wire/messages.ts";
import { eventually } from "../support/eventually.ts";
import { FakeClock } from "../support/fake-clock.ts";
import { Signal } from "../support/signal.ts";
import { StandInBrokerLink } from "../support/stand-in-broker-link.ts";

const log = pino({ level: process.env.TEST_LOG_LEVEL ?? "silent" });
const GW = "gw-access";
const LOCATION = "10000000-0000-4000-8000-000000000001";
const DOOR = "20000000-0000-4000-8000-0000000000d0";
const LOCKER = (n: number) => `20000000-0000-4000-8000-00000000000${n}`;
const WL_MEMBERS = "30000000-0000-4000-8000-00000000000a";
const WL_STAFF = "30000000-0000-4000-8000-00000000000b";

const MEMBER = "04a1b2c3d4";
const RIDER = "04a1b2c3d5";
const EXPIRING = "04a1b2c3d6";
const MASTER = "0badc0de";
const NEWCOMER = "04c0ffee01";
const UNKNOWN = "04dead0001";

const MAP: DeviceMap = {
  gateway_id: GW,
  version: "m1",
  location: { id: LOCATION, rfid_parking: true },
  devices: [
    { device_id: DOOR, type: "BIKE_HOUSE_DOOR", alias: "north", bus: null, has_camera: false },
    ...[1, 2, 3].map((n) => ({
      device_id: LOCKER(n),
      type: "LOCKER",
      alias: String(n),
      bus: { board: 1, channel: n },
      has_camera: false,
      ...(n === 3 ? { power_save_strategy: "LOCAL_WAKEUP" as const } : {}),
    })),
  ],
};

const grantOf = (card: string, over: Partial<Grant> = {}): Grant => ({
  card_id: card,
  whitelist_id: WL_MEMBERS,
  status: "ACTIVE",
  expires_at: null,
  is_master_key: false,
  location_ids: [LOCATION],
  device_ids: [],
  ...over,
});

let cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanup.reverse()) await c();
  cleanup = [];
});

/**
 * A real gateway daemon on the in-memory simulator (door "north" on GPIO, lockers 1–3 on board 1, a reader
 * at each), a fake clock, and a stand-in broker link the test drives as the cloud. Not connected at first.
 */
async function rig(o: { before?: (store: GatewayStore) => void } = {}) {
  const clock = new FakeClock();
  const dir = mkdtempSync(path.join(tmpdir(), "gw-access-"));
  if (o.before) {
    const store = openGatewayStore(path.join(dir, "state"), { gatewayId: GW, clock });
    o.before(store);
    store.close();
  }
  const sim: SimSite = createSimSite(
    {
      moveMs: 0,
      buses: { bus0: { boards: [{ address: 1, channels: 3, latch: "unlocked" }] } },
      readers: {
        "reader-door": { aliveMs: false },
        "reader-1": { aliveMs: false },
        "reader-2": { aliveMs: false },
        "reader-3": { aliveMs: false },
      },
      doors: ["north"],
    },
    { timers: clock },
  );
  const link = new StandInBrokerLink(clock, GW);
  const config = parseGatewayConfig({
    gateway_id: GW,
    secret: "access-test-secret",
    broker: { url: "mqtt://127.0.0.1:1", prefix: "t" },
    state_dir: path.join(dir, "state"),
    buses: [{ name: "bus0", path: "sim://bus0", boards: [1] }],
    readers: [
      { id: "reader-door", path: "sim://reader-door", device_alias: "north" },
      { id: "reader-1", path: "sim://reader-1", device_alias: "1" },
      { id: "reader-2", path: "sim://reader-2", device_alias: "2" },
      { id: "reader-3", path: "sim://reader-3", device_alias: "3" },
    ],
    sensor_sweep: null,
    key_sweep: null,
    log_level: "silent",
  });
  const gateway: RunningGateway = await startGateway({
    config,
    secret: "access-test-secret",
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

  const decided: AccessDecision[] = [];
  const signal = new Signal();
  gateway.onAccess((d) => {
    decided.push(d);
    signal.notify();
  });
  link.sendMap(MAP);
  // The map's devices are read at once: a locker's latch must be known before it can be parked in.
  await eventually(async () => {
    const devices = await gateway.control.devices();
    expect(devices.filter((d) => d.alias !== "north").map((d) => d.latch)).toEqual([
      "unlocked",
      "unlocked",
      "unlocked",
    ]);
  });

  /** A card on a reader; resolves with the decision the gateway recorded for it. */
  async function tap(reader: string, card: string, whileWaiting?: () => Promise<void> | void) {
    const before = decided.length;
    sim.reader(reader).tap(card);
    await whileWaiting?.();
    await signal.until(() => decided.length > before);
    return decided[before] as AccessDecision;
  }

  /** The cloud sends keys while connected; the gateway confirms the version it then holds. */
  async function sync(...msgs: KeysDown[]) {
    const wasConnected = link.connected;
    link.connect();
    for (const m of msgs) link.deliver(m);
    const last = msgs.at(-1);
    if (last && last.kind !== "answer") await link.until(() => link.versions().at(-1) === last.version);
    if (!wasConnected) link.disconnect();
  }

  const snapshot = (version: number, grants: Grant[]): KeysDown => ({
    kind: "snapshot",
    gateway_id: GW,
    version,
    part: 1,
    parts: 1,
    grants,
  });

  const board = sim.board("bus0", 1);
  return { clock, sim, link, gateway, board, tap, sync, snapshot, decided, signal };
}

describe("access at the edge: doors", () => {
  it("a whitelisted tap opens a door with no broker connection, and the cloud hears of it later", async () => {
    const r = await rig();
    await r.sync(r.snapshot(1, [grantOf(MEMBER)]));
    expect(r.link.connected).toBe(false);
    const door = r.sim.door("north");
    expect(door.isStrikeReleased).toBe(false);

    const d = await r.tap("reader-door", MEMBER);
    expect(d).toMatchObject({
      type: "access_decision",
      reader: "reader-door",
      device_id: DOOR,
      card_id: MEMBER,
      granted: true,
      action: "unlock",
      reason: "whitelisted",
      whitelist_id: WL_MEMBERS,
      decided_by: "local",
      actuated: true,
    });
    expect(door.isStrikeReleased).toBe(true);

    // Durable first: it reaches the cloud once the broker is back, with the door's new state after it.
    r.link.connect();
    const tapState = () =>
      r.link.up.find((m) => m.type === "device_state" && m.device_id === DOOR && m.cause === "tap");
    await r.link.until(() => tapState() !== undefined);
    expect(r.link.decisions()).toEqual([d]);
    expect(tapState()).toMatchObject({ lock_state: "UNLOCKED" });
    expect(r.link.up.indexOf(d)).toBeLessThan(r.link.up.indexOf(tapState()!));
  });

  it("a second tap on a door still released reports it again, so the cloud's re-lock time moves too", async () => {
    const r = await rig();
    await r.sync(r.snapshot(1, [grantOf(MEMBER)]));
    r.link.connect();
    const tapStates = () =>
      r.link.up.filter((m) => m.type === "device_state" && m.device_id === DOOR && m.cause === "tap");
    expect((await r.tap("reader-door", MEMBER)).actuated).toBe(true);
    await r.link.until(() => tapStates().length === 1);
    r.clock.advance(4_000);
    expect(r.sim.door("north").isStrikeReleased).toBe(true);
    expect((await r.tap("reader-door", MEMBER)).actuated).toBe(true);
    await r.link.until(() => tapStates().length === 2);
    expect(tapStates().map((m) => m.type === "device_state" && m.lock_state)).toEqual([
      "UNLOCKED",
      "UNLOCKED",
    ]);
    // The window restarted with the second tap: still released just before its end, locked at it.
    r.clock.advance(9_999);
    expect(r.sim.door("north").isStrikeReleased).toBe(true);
    r.clock.advance(1);
    expect(r.sim.door("north").isStrikeReleased).toBe(false);
  });

  it("an expired card is refused offline from expires_at on", async () => {
    const r = await rig();
    const expiresAt = new Date(r.clock.now().getTime() + 60_000).toISOString();
    await r.sync(r.snapshot(1, [grantOf(EXPIRING, { expires_at: expiresAt })]));
    expect((await r.tap("reader-door", EXPIRING)).granted).toBe(true);
    r.clock.advance(60_000);
    const door = r.sim.door("north");
    expect(door.isStrikeReleased).toBe(false); // its release window ran out meanwhile
    expect(await r.tap("reader-door", EXPIRING)).toMatchObject({
      granted: false,
      action: "none",
      reason: "expired",
      whitelist_id: WL_MEMBERS,
      decided_by: "local",
      actuated: null,
      // It never heard the cloud's time: its own clock judged, and the access log says so.
      judged_on_wall_clock: true,
    });
    expect(door.isStrikeReleased).toBe(false);
  });

  it("a decision says when expiry was judged on the gateway's wall clock: only before it heard the cloud's time", async () => {
    const r = await rig();
    await r.sync(r.snapshot(1, [grantOf(MEMBER)]));
    expect((await r.tap("reader-door", MEMBER)).judged_on_wall_clock).toBe(true);
    r.link.emit("cloudTime", r.clock.now().toISOString(), true);
    r.clock.advance(20_000);
    const d = await r.tap("reader-door", MEMBER);
    expect(d.granted).toBe(true);
    expect(d.judged_on_wall_clock).toBeUndefined();
  });
});

describe("access at the edge: lockers", () => {
  it("rfid_parking: a tap on a free locker locks it for the card, and the same card unlocks it", async () => {
    const r = await rig();
    await r.sync(r.snapshot(1, [grantOf(MEMBER), grantOf(RIDER)]));

    expect(await r.tap("reader-1", MEMBER)).toMatchObject({
      device_id: LOCKER(1),
      granted: true,
      action: "lock",
      reason: "parked",
      whitelist_id: WL_MEMBERS,
      actuated: true,
    });
    expect(r.board.channel(1).latch).toBe("locked");
    expect(await r.gateway.control.device("1")).toMatchObject({ latch: "locked" });

    // Another member's card does not open it.
    expect(await r.tap("reader-1", RIDER)).toMatchObject({ granted: false, reason: "occupied" });
    expect(r.board.channel(1).latch).toBe("locked");

    expect(await r.tap("reader-1", MEMBER)).toMatchObject({
      granted: true,
      action: "unlock",
      reason: "retrieved",
      whitelist_id: null,
      actuated: true,
    });
    expect(r.board.channel(1).latch).toBe("unlocked");
  });

  it("a master key unlocks an occupied locker; the parker's card no longer does", async () => {
    const r = await rig();
    await r.sync(
      r.snapshot(1, [grantOf(MEMBER), grantOf(MASTER, { whitelist_id: WL_STAFF, is_master_key: true })]),
    );
    await r.tap("reader-2", MEMBER);
    expect(r.board.channel(2).latch).toBe("locked");

    expect(await r.tap("reader-2", MASTER)).toMatchObject({
      granted: true,
      action: "unlock",
      reason: "master_key",
      whitelist_id: WL_STAFF,
      actuated: true,
    });
    expect(r.board.channel(2).latch).toBe("unlocked");
    // Free again: the member's next tap parks anew rather than "retrieving".
    expect(await r.tap("reader-2", MEMBER)).toMatchObject({ action: "lock", reason: "parked" });
  });

  it("a booked locker refuses a member; a master key parks past the booking, which ends", async () => {
    const r = await rig();
    await r.sync(
      r.snapshot(1, [grantOf(MEMBER), grantOf(MASTER, { whitelist_id: WL_STAFF, is_master_key: true })]),
    );
    const now = r.clock.now().getTime();
    r.link.emit("command", {
      command_id: "cccccccc-0000-4000-8000-000000000001",
      device_id: LOCKER(3),
      name: "book",
      params: { booking: { holder: "app-user-1", until: new Date(now + 3_600_000).toISOString() } },
      issued_at: new Date(now).toISOString(),
      expires_at: new Date(now + 30_000).toISOString(),
    });
    await eventually(async () => expect((await r.gateway.control.device("3"))?.booking).not.toBeNull());
    expect(await r.tap("reader-3", MEMBER)).toMatchObject({ granted: false, reason: "booked" });
    expect(await r.tap("reader-3", MASTER)).toMatchObject({
      granted: true,
      action: "lock",
      reason: "parked",
    });
    expect((await r.gateway.control.device("3"))?.booking).toBeNull();
  });

  it("a lock the hardware does not do is reported actuation_failed, and parks nothing", async () => {
    const r = await rig();
    await r.sync(r.snapshot(1, [grantOf(MEMBER)]));
    const unjam = r.board.use(jam(1));
    expect(await r.tap("reader-1", MEMBER)).toMatchObject({
      granted: true,
      action: "lock",
      reason: "actuation_failed",
      whitelist_id: WL_MEMBERS,
      actuated: false,
    });
    unjam();
    r.board.setJammed(1, false);
    // Still free, and nobody's: the next tap parks.
    expect(await r.tap("reader-1", MEMBER)).toMatchObject({ reason: "parked", actuated: true });
  });

  it("a decision the last run began to actuate is reported at the next start, its outcome unknown (F2)", async () => {
    const draft = {
      type: "access_decision" as const,
      observed_at: "2026-01-15T09:59:00.000Z",
      reader: "reader-2",
      device_id: LOCKER(2),
      card_id: MEMBER,
      granted: true,
      action: "lock" as const,
      reason: "parked",
      whitelist_id: WL_MEMBERS,
      decided_by: "local" as const,
    };
    const r = await rig({
      before: (store) => {
        store.deviceMaps.save(MAP);
        store.tapJournal.begin(draft);
      },
    });
    r.link.connect();
    await r.link.until(() => r.link.decisions().length > 0);
    expect(r.link.decisions()).toEqual([
      { ...draft, actuated: null, gateway_id: GW, seq: 1, outbox_id: expect.any(String) },
    ]);
    // The latch read at start says the lock never happened: the locker is free, and nobody's.
    await r.sync(r.snapshot(1, [grantOf(RIDER)]));
    expect(await r.tap("reader-2", RIDER)).toMatchObject({ reason: "parked" });
  });

  it("a locker unlocked by other means forgets who parked it", async () => {
    const r = await rig();
    await r.sync(r.snapshot(1, [grantOf(MEMBER), grantOf(RIDER)]));
    await r.tap("reader-1", MEMBER);
    // A technician's key, say: the board reports the latch turned.
    r.board.turnLatch(1, "unlocked");
    await eventually(async () => expect((await r.gateway.control.device("1"))?.latch).toBe("unlocked"));
    r.board.turnLatch(1, "locked");
    await eventually(async () => expect((await r.gateway.control.device("1"))?.latch).toBe("locked"));
    // Whatever is inside now is not the member's.
    expect(await r.tap("reader-1", MEMBER)).toMatchObject({ granted: false, reason: "occupied" });
  });

  it("taps on one locker are decided one at a time: two cards racing for it, one parks", async () => {
    const r = await rig();
    await r.sync(r.snapshot(1, [grantOf(MEMBER), grantOf(RIDER)]));
    const before = r.decided.length;
    r.sim.reader("reader-3").tap(MEMBER);
    r.sim.reader("reader-3").tap(RIDER);
    await r.signal.until(() => r.decided.length >= before + 2);
    expect(r.decided.slice(before).map((d) => [d.card_id, d.reason])).toEqual([
      [MEMBER, "parked"],
      [RIDER, "occupied"],
    ]);
    expect(r.board.received.filter((q) => q.kind === "lock")).toHaveLength(1);
  });
});

describe("access at the edge: cards the cache does not hold", () => {
  it("asks the cloud when connected and decides on its answer", async () => {
    const r = await rig();
    await r.sync(r.snapshot(1, [grantOf(MEMBER)]));
    r.link.connect();
    r.link.answer = (q) =>
      q.card_id === UNKNOWN ? [grantOf(UNKNOWN, { device_ids: [DOOR], location_ids: [] })] : [];

    expect(await r.tap("reader-door", UNKNOWN)).toMatchObject({
      granted: true,
      reason: "whitelisted",
      decided_by: "cloud",
      actuated: true,
    });
    expect(r.link.queries()).toEqual([
      { kind: "query", gateway_id: GW, query_id: expect.any(String), card_id: UNKNOWN, device_id: DOOR },
    ]);
    // The cloud knows the card nowhere here.
    expect(await r.tap("reader-door", NEWCOMER)).toMatchObject({
      granted: false,
      reason: "unknown_card",
      decided_by: "cloud",
    });
    // A card the cache holds is never asked about.
    await r.tap("reader-door", MEMBER);
    expect(r.link.queries()).toHaveLength(2);
  });

  it("refuses offline_unknown when the cloud does not answer in time, or the broker is away", async () => {
    const r = await rig();
    r.link.connect();
    r.link.answer = () => null; // silence
    const d = await r.tap("reader-door", UNKNOWN, async () => {
      await r.link.until(() => r.link.queries().length === 1);
      r.clock.advance(1_499);
      expect(r.decided).toHaveLength(0);
      r.clock.advance(1);
    });
    expect(d).toMatchObject({
      granted: false,
      reason: "offline_unknown",
      decided_by: "local",
      actuated: null,
    });

    r.link.disconnect();
    expect(await r.tap("reader-door", UNKNOWN)).toMatchObject({ granted: false, reason: "offline_unknown" });
    expect(r.link.queries()).toHaveLength(1);
    expect(r.sim.door("north").isStrikeReleased).toBe(false);
  });

  it("a connection lost while waiting for the answer refuses at once", async () => {
    const r = await rig();
    r.link.connect();
    const d = await r.tap("reader-door", UNKNOWN, async () => {
      await r.link.until(() => r.link.queries().length === 1);
      r.link.disconnect();
    });
    expect(d).toMatchObject({ reason: "offline_unknown" });
  });
});

describe("whitelist sync on the gateway", () => {
  it("reports its version on every connect, and after each delta it applies", async () => {
    const r = await rig();
    r.link.connect();
    expect(r.link.versions()).toEqual([0]);
    r.link.deliver({
      kind: "delta",
      gateway_id: GW,
      base_version: 0,
      version: 1,
      upserts: [grantOf(MEMBER)],
      removals: [],
    });
    expect(r.link.versions()).toEqual([0, 1]);
    r.link.disconnect();
    r.link.connect();
    expect(r.link.versions()).toEqual([0, 1, 1]);
    expect((await r.gateway.control.status()).keys).toEqual({ version: 1, grants: 1 });
  });

  it("reports its version again when the cloud asks for a resend (the cloud reconnected after it)", async () => {
    const r = await rig();
    await r.sync(r.snapshot(4, [grantOf(MEMBER)]));
    r.link.connect();
    const reports = r.link.versions().length;
    r.link.emit("ack", [], true);
    r.link.emit("ack", [], false); // a plain ack is not a question
    expect(r.link.versions().slice(reports)).toEqual([4]);
  });

  it("a delta made from another version changes nothing and makes it report the version it holds", async () => {
    const r = await rig();
    await r.sync(r.snapshot(4, [grantOf(MEMBER)]));
    r.link.connect();
    const reports = r.link.versions().length;
    r.link.deliver({
      kind: "delta",
      gateway_id: GW,
      base_version: 6,
      version: 7,
      upserts: [],
      removals: [{ card_id: MEMBER, whitelist_id: WL_MEMBERS }],
    });
    expect(r.link.versions().slice(reports)).toEqual([4]);
    expect((await r.gateway.control.status()).keys).toEqual({ version: 4, grants: 1 });
    expect((await r.tap("reader-door", MEMBER)).granted).toBe(true);
  });

  it("a card removed by a delta is refused", async () => {
    const r = await rig();
    await r.sync(r.snapshot(1, [grantOf(MEMBER), grantOf(RIDER)]));
    await r.sync({
      kind: "delta",
      gateway_id: GW,
      base_version: 1,
      version: 2,
      upserts: [],
      removals: [{ card_id: RIDER, whitelist_id: WL_MEMBERS }],
    });
    expect(await r.tap("reader-door", RIDER)).toMatchObject({ granted: false, reason: "offline_unknown" });
    expect((await r.tap("reader-door", MEMBER)).granted).toBe(true);
  });

  it("a snapshot in parts takes effect whole, once its last part arrives", async () => {
    const r = await rig();
    await r.sync(r.snapshot(1, [grantOf(MEMBER)]));
    r.link.connect();
    r.link.answer = () => []; // the cloud knows no other card: refusals come back decided by the cloud
    const part = (n: number, grants: Grant[]): KeysDown => ({
      kind: "snapshot",
      gateway_id: GW,
      version: 2,
      part: n,
      parts: 2,
      grants,
    });
    r.link.deliver(part(1, [grantOf(NEWCOMER)]));
    // Half a snapshot changes nothing: the old grants still decide, the new card is not held yet.
    expect((await r.gateway.control.status()).keys).toEqual({ version: 1, grants: 1 });
    expect(await r.tap("reader-door", MEMBER)).toMatchObject({ granted: true, decided_by: "local" });
    expect(await r.tap("reader-door", NEWCOMER)).toMatchObject({ granted: false, decided_by: "cloud" });
    expect(r.link.versions().at(-1)).toBe(1);

    r.link.deliver(part(2, [grantOf(RIDER)]));
    expect(r.link.versions().at(-1)).toBe(2);
    expect((await r.gateway.control.status()).keys).toEqual({ version: 2, grants: 2 });
    expect(await r.tap("reader-door", NEWCOMER)).toMatchObject({ granted: true, decided_by: "local" });
    expect(await r.tap("reader-door", MEMBER)).toMatchObject({ granted: false, reason: "unknown_card" });
  });

  it("parkctl keys shows a card's grants and whether each opens anything now", async () => {
    const r = await rig();
    const past = new Date(r.clock.now().getTime() - 1).toISOString();
    await r.sync(
      r.snapshot(1, [grantOf(MEMBER), grantOf(MEMBER, { whitelist_id: WL_STAFF, expires_at: past })]),
    );
    const k = await r.gateway.control.keys("04:A1:B2:C3:D4");
    expect(k).toMatchObject({ card_id: MEMBER, version: 1 });
    expect(k.grants.map((g) => [g.whitelist_id, g.state])).toEqual([
      [WL_MEMBERS, "valid"],
      [WL_STAFF, "expired"],
    ]);
    await expect(r.gateway.control.keys("xyz")).rejects.toThrow(/not a card id/);
  });
});
