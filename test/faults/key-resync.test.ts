import path from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectMqtt } from "../../cloud/gateway-link/mqtt-client.ts";
import { accessEventRepository } from "../../cloud/key-sync/access-event-repository.ts";
import { keySyncRepository } from "../../cloud/key-sync/key-sync-repository.ts";
import type { ManifestInput } from "../../cloud/manifest/manifest-schema.ts";
import { eventually } from "../support/eventually.ts";
import { fx } from "../support/fixture-site.ts";
import { FIXTURE_WHITELISTS } from "../support/fixture-whitelists.ts";
import { type DaemonSite, startDaemonSite } from "./support/daemon.ts";
import { type HoldProxy, startHoldProxy } from "./support/hold-proxy.ts";

// A whitelist delta lost in a broker restart mid-sync, on the real daemon: the cloud's delta reaches the
// broker for the daemon, the broker dies (no persistence) before the daemon has it, and the daemon's version
// report on reconnect brings it what it lacks.

const WL = FIXTURE_WHITELISTS.a;
const KEPT = "04a1b2c3d4";
const REMOVED = "04a1b2c3d5";
const ADDED = "0c0c0c0c";
const LOCKER = fx.device("L1", "1"); // board 1 channel 1, served by reader-1

/** The fixture's whitelist of operator A, targeting L1, where a tap on a free locker parks it (rfid_parking). */
function withWhitelist(m: ManifestInput) {
  const op = m.operators[0];
  const l1 = op?.locations?.[0];
  if (!op || !l1) throw new Error("the fixture's first location is L1");
  l1.attrs = { ...l1.attrs, rfid_parking: true };
  op.whitelists = [
    {
      id: WL,
      name: "Fixture cards",
      targets: [{ location: "L1" }],
      entities: [{ id: KEPT }, { id: REMOVED }],
    },
  ];
}

describe("a whitelist delta lost in a broker restart mid-sync (real daemon)", () => {
  let s: DaemonSite;
  /** Between the daemon and Mosquitto. */
  let proxy: HoldProxy;
  /** Between the cloud and Mosquitto. */
  let cloudProxy: HoldProxy;
  beforeAll(async () => {
    s = await startDaemonSite({
      store: "postgres",
      manifest: withWhitelist,
      brokerUrlFor: async (url) => {
        proxy = await startHoldProxy(url);
        return proxy.url;
      },
      cloudBrokerUrlFor: async (url) => {
        cloudProxy = await startHoldProxy(url);
        return cloudProxy.url;
      },
    });
  });
  afterAll(async () => {
    await s?.stop();
    await proxy?.stop();
    await cloudProxy?.stop();
  });

  /** The daemon's key cache as its store holds it (read beside it). */
  function daemonKeys() {
    const db = new Database(path.join(s.daemon.stateDir, "gateway.db"), { readonly: true });
    try {
      const { version } = db.prepare("SELECT version FROM key_state").get() as { version: number };
      const cards = (db.prepare("SELECT card_id FROM key_grants").all() as { card_id: string }[]).map(
        (r) => r.card_id,
      );
      return { version, cards: cards.sort() };
    } finally {
      db.close();
    }
  }

  /** The daemon holds the cloud's key version, and has told the cloud so. */
  async function inSync() {
    await eventually(async () => {
      const cloud = await keySyncRepository(s.site.db).versionsOf("gw-a1");
      expect(cloud.version).toBeGreaterThan(0);
      expect(cloud.confirmed).toBe(cloud.version);
      expect(daemonKeys().version).toBe(cloud.version);
    }, 40_000);
  }

  const entities = (operation: "ADD" | "REMOVE", id: string) =>
    s.site.api("POST", `/whitelist/v1/whitelists/${WL}/entities`, {
      operation,
      entities: [{ id, id_type: "rfid" }],
    });

  /** Taps a card at reader-1 and waits for its access decision to reach the cloud. */
  async function tap(card: string) {
    const seen = (await accessEventRepository(s.site.db).atDevice(LOCKER)).length;
    s.site.sim.reader("reader-1").tap(card);
    return eventually(async () => {
      const rows = await accessEventRepository(s.site.db).atDevice(LOCKER);
      const row = rows.slice(seen).find((r) => r.card_id === card);
      if (!row) throw new Error(`the tap of ${card} has not reached the cloud`);
      return row;
    }, 30_000);
  }

  it("refuses a card whose removal was lost, grants one still there and one added meanwhile", async () => {
    await s.ready();
    await inSync();
    const before = daemonKeys();
    expect(before.cards).toEqual([KEPT, REMOVED]);

    // The uplink stalls; the cloud's changes go to the broker for the daemon, and the broker dies with them.
    proxy.hold();
    expect((await entities("REMOVE", REMOVED)).statusCode).toBe(204);
    expect((await entities("ADD", ADDED)).statusCode).toBe(204);
    await eventually(() => {
      const held = proxy.heldFromBroker();
      expect(held).toContain("/keys");
      expect(held).toContain(REMOVED);
      expect(held).toContain(ADDED);
    }, 20_000);
    await s.mosquitto.kill();
    expect(daemonKeys()).toEqual(before); // the deltas never arrived
    await s.mosquitto.restart();
    proxy.release();

    // On reconnect the daemon reports the version it holds and the cloud sends what it lacks.
    await inSync();
    expect(daemonKeys().cards).toEqual([ADDED, KEPT].sort());

    // At the door: the removed card is refused, the kept one parks the free locker and takes it back, and
    // the added one parks it, decided from the daemon's own cache.
    const refused = await tap(REMOVED);
    expect(refused).toMatchObject({ granted: 0, action: "none" });
    expect(s.site.sim.board("bus0", 1).channel(1).latch).toBe("unlocked");
    expect(await tap(KEPT)).toMatchObject({
      granted: 1,
      action: "lock",
      reason: "parked",
      decided_by: "local",
    });
    expect(s.site.sim.board("bus0", 1).channel(1).latch).toBe("locked");
    expect(await tap(KEPT)).toMatchObject({ granted: 1, action: "unlock", reason: "retrieved" });
    expect(await tap(ADDED)).toMatchObject({
      granted: 1,
      action: "lock",
      reason: "parked",
      decided_by: "local",
    });
    expect(s.site.sim.board("bus0", 1).channel(1).latch).toBe("locked");
    const rows = await accessEventRepository(s.site.db).atDevice(LOCKER);
    expect(rows.map((r) => [r.card_id, r.granted])).toEqual([
      [REMOVED, 0],
      [KEPT, 1],
      [KEPT, 1],
      [ADDED, 1],
    ]);
  });

  it("resyncs when the daemon is back before the cloud: its lost report is asked for again", async () => {
    await inSync();
    const before = daemonKeys();
    proxy.hold();
    expect((await entities("REMOVE", KEPT)).statusCode).toBe(204);
    await eventually(() => expect(proxy.heldFromBroker()).toContain(KEPT), 20_000);
    // The broker dies with the delta; the cloud stays away after it comes back, the daemon does not.
    cloudProxy.hold();
    await s.mosquitto.kill();
    await s.mosquitto.restart();
    const seen = await watchGateway();
    try {
      proxy.release();
      // The daemon's version report on connect goes to a broker nobody listens on for it.
      await eventually(() => expect(seen.channels()).toContain("keys_report"), 40_000);
      const cloud = await keySyncRepository(s.site.db).versionsOf("gw-a1");
      expect(cloud.confirmed).toBe(before.version);
      cloudProxy.release();
      await inSync();
      // The cloud, back, asked for a resend; the daemon said its version again, and the delta answered it
      // (rather than the cloud's sweep, up to 30 s later).
      const after = seen.channels().slice(seen.channels().indexOf("resend"));
      expect(after).toContain("keys");
      expect(after.indexOf("keys_report")).toBeGreaterThan(0);
      expect(after.indexOf("keys_report")).toBeLessThan(after.indexOf("keys"));
    } finally {
      await seen.close();
    }
    expect(daemonKeys().cards).toEqual([ADDED]);
    const refused = await tap(KEPT);
    expect(refused).toMatchObject({ granted: 0, action: "none" });
  });

  /** What passes on the broker for gw-a1, up and down, by channel (a resend request shows as `resend`). */
  async function watchGateway() {
    const client = connectMqtt(s.mosquitto.url, { clientId: `watch-${Date.now()}`, clean: true });
    const order: string[] = [];
    client.on("message", (topic, payload) => {
      const channel = topic.split("/").at(-1) ?? "";
      const resend = channel === "ack" && (JSON.parse(payload.toString()) as { resend?: boolean }).resend;
      order.push(resend ? "resend" : channel);
    });
    await client.subscribeAsync(`${s.site.prefix}/v1/gw/gw-a1/+`, { qos: 1 });
    return { channels: () => [...order], close: () => client.endAsync() };
  }
});
