import { randomBytes } from "node:crypto";
import { Webhook } from "standardwebhooks";
import { afterEach, describe, expect, it, vi } from "vitest";
import { hardwareReportRepository } from "../../cloud/gateway-link/hardware-report-repository.ts";
import { accessEventRepository } from "../../cloud/key-sync/access-event-repository.ts";
import { keySyncRepository } from "../../cloud/key-sync/key-sync-repository.ts";
import type { ManifestInput } from "../../cloud/manifest/manifest-schema.ts";
import { SessionV2List } from "../../shared/api/session.ts";
import type { AccessDecision } from "../../shared/wire/messages.ts";
import { eventually } from "../support/eventually.ts";
import { fx } from "../support/fixture-site.ts";
import { type Site, type SiteOptions, startSite } from "../support/site-harness.ts";
import { WebhookReceiver } from "../support/webhook-receiver.ts";

/** Offline-first site access end to end (issue 9): the real cloud, broker, gateway and simulator. */

const WL = "e2e0e2e0-0000-4000-8000-000000000001";
const HOOK = "e2e0e2e0-0000-4000-8000-0000000000aa";
const MEMBER = "04a1b2c3d4";
const MASTER = "0a0b0c0d";
const LOCKER = fx.device("L1", "1"); // board 1 channel 1, served by reader-1
const DOOR = fx.device("L1", "door"); // board 1 channel 6, a door lock with its contact
const SECRET = `whsec_${randomBytes(32).toString("base64")}`;
const HOUR = 3_600_000;

/** L1 with rfid_parking, a door on gw-a1 with its reader, a keys_only whitelist, a webhook endpoint. */
function siteManifest(
  receiverUrl: string,
  cards: { id: string; is_master_key?: boolean; expires_at?: string }[],
) {
  return (m: ManifestInput) => {
    const op = m.operators[0];
    const l1 = op?.locations?.[0];
    if (!op || !l1) throw new Error("the fixture's first location is L1");
    l1.attrs = { ...l1.attrs, rfid_parking: true };
    l1.gateways?.[0]?.devices?.push({
      alias: "door",
      type: "BIKE_HOUSE_DOOR",
      bus: { board: 1, channel: 6 },
    });
    op.whitelists = [{ id: WL, name: "Members", targets: [{ location: "L1" }], entities: cards }];
    op.webhooks = [
      { id: HOOK, url: receiverUrl, secret: SECRET, types: ["alarm", "status"], allow_private: true },
    ];
  };
}

describe("offline-first site access (aedes, in-memory serial)", () => {
  let site: Site | null = null;
  let receiver: WebhookReceiver | null = null;
  afterEach(async () => {
    await site?.stop();
    await receiver?.stop();
    site = null;
    receiver = null;
  });

  type Card = { id: string; is_master_key?: boolean; expires_at?: string };
  async function start(
    o: Partial<SiteOptions> = {},
    cards: Card[] = [{ id: MEMBER }, { id: MASTER, is_master_key: true }],
  ) {
    receiver = await new WebhookReceiver(() => new Date()).start();
    const s = await startSite({
      broker: "aedes",
      serial: "memory",
      doors: [6],
      readers: { "reader-door": "door" },
      manifest: siteManifest(receiver.url, cards),
      gateway: { door_watch_s: 0.1 },
      siteEvents: true,
      ...o,
    });
    site = s;
    await inSync(s);
    return s;
  }

  const cloudKeyVersion = (s: Site) => keySyncRepository(s.db).versionsOf("gw-a1");

  /** The gateway holds the cloud's key version, and the cloud knows it does. */
  async function inSync(s: Site) {
    await eventually(async () => {
      const cloud = await cloudKeyVersion(s);
      expect(cloud.version).toBeGreaterThan(0);
      expect((await s.status()).keys.version).toBe(cloud.version);
      expect(cloud.confirmed).toBe(cloud.version);
    }, 20_000);
  }

  /** The locker's sessions as the operator's admin lists them. */
  async function lockerSessions(s: Site) {
    const res = await s.api("GET", "/session/v2/sessions");
    expect(res.statusCode, res.body).toBe(200);
    return SessionV2List.parse(res.json()).data.filter((x) => x.storage.device.id === LOCKER);
  }

  /** Taps a card and waits for the gateway's decision. */
  function tap(s: Site, reader: string, card: string): Promise<AccessDecision> {
    const decided = new Promise<AccessDecision>((resolve) => {
      const off = s.gateway.onAccess((d) => {
        if (d.reader !== reader || d.card_id !== card) return;
        off();
        resolve(d);
      });
    });
    s.sim.reader(reader).tap(card);
    return decided;
  }

  const entities = (s: Site, operation: "ADD" | "REMOVE", list: object[]) =>
    s.api("POST", `/whitelist/v1/whitelists/${WL}/entities`, { operation, entities: list });

  it("opens the door for a whitelisted card with the broker down, and refuses an unknown one", async () => {
    const s = await start();
    await s.brokerDown();
    await eventually(async () => expect((await s.status()).broker.connected).toBe(false), 10_000);
    const unlocksBefore = s.sim
      .board("bus0", 1)
      .received.filter((r) => r.kind === "unlock" && r.channel === 6);
    const granted = await tap(s, "reader-door", MEMBER);
    expect(granted).toMatchObject({ granted: true, action: "unlock", decided_by: "local", actuated: true });
    expect(granted.device_id).toBe(DOOR);
    const unlocks = s.sim.board("bus0", 1).received.filter((r) => r.kind === "unlock" && r.channel === 6);
    expect(unlocks.length).toBe(unlocksBefore.length + 1);
    const refused = await tap(s, "reader-door", "ffee");
    expect(refused).toMatchObject({ granted: false, action: "none", reason: "offline_unknown" });
    // Both decisions reach the cloud once the broker is back, through the outbox.
    await s.brokerUp();
    await eventually(async () => {
      const rows = await accessEventRepository(s.db).atDevice(DOOR);
      expect(rows.map((r) => [r.card_id, r.granted, r.reason]).sort()).toEqual([
        [MEMBER, 1, "whitelisted"],
        ["ffee", 0, "offline_unknown"],
      ]);
    }, 20_000);
  });

  it("refuses a card removed in the cloud once the change has synced", async () => {
    const s = await start();
    expect((await tap(s, "reader-door", MEMBER)).granted).toBe(true);
    const res = await entities(s, "REMOVE", [{ id: MEMBER, id_type: "rfid" }]);
    expect(res.statusCode, res.body).toBe(204);
    await inSync(s);
    const d = await tap(s, "reader-door", MEMBER);
    expect(d.granted).toBe(false);
  });

  it("refuses an expired card with the broker down (the gateway checks the time itself)", async () => {
    const s = await start({}, [{ id: MEMBER, expires_at: new Date(Date.now() + HOUR).toISOString() }]);
    await s.brokerDown();
    expect((await tap(s, "reader-door", MEMBER)).granted).toBe(true);
    s.clock.advance(2 * HOUR); // two hours pass: the gateway's estimate of the cloud's clock runs on

    expect(await tap(s, "reader-door", MEMBER)).toMatchObject({ granted: false, reason: "expired" });
  });

  it("parks a locker for a card and gives it back to that card only, as an uncharged session; a master key opens it too", async () => {
    const s = await start();
    const park = await tap(s, "reader-1", MEMBER);
    expect(park).toMatchObject({ granted: true, action: "lock", reason: "parked", actuated: true });
    expect(s.sim.board("bus0", 1).channel(1).latch).toBe("locked");
    // The cloud sees the locker locked and a session identified only by the card.
    await eventually(async () => {
      const d = (await s.api("GET", `/device/v1/devices/${LOCKER}`)).json();
      expect(d.state.value).toBe("LOCKED");
      const rows = await lockerSessions(s);
      expect(rows.map((r) => [r.access_key_id, r.status])).toEqual([[MEMBER, "active"]]);
    }, 20_000);
    // Another card may not take it out; the card that parked it may.
    expect(await tap(s, "reader-1", "ffee")).toMatchObject({ granted: false });
    const back = await tap(s, "reader-1", MEMBER);
    expect(back).toMatchObject({ granted: true, action: "unlock", reason: "retrieved" });
    await eventually(async () => {
      const rows = await lockerSessions(s);
      expect(rows.map((r) => r.status)).toEqual(["ended"]);
      expect(rows.map((r) => r.payment?.status)).toEqual(["NOT_CHARGED"]);
    }, 20_000);
    // Locked by the API this time: a master key opens the occupied locker.
    const post = await s.api("POST", `/device/v1/devices/${LOCKER}/commands`, { command: "lock" });
    expect(post.statusCode).toBe(200);
    await eventually(() => expect(s.sim.board("bus0", 1).channel(1).latch).toBe("locked"), 20_000);
    expect(await tap(s, "reader-1", MEMBER)).toMatchObject({ granted: false, reason: "occupied" });
    expect(await tap(s, "reader-1", MASTER)).toMatchObject({
      granted: true,
      action: "unlock",
      reason: "master_key",
    });
    expect(s.sim.board("bus0", 1).channel(1).latch).toBe("unlocked");
  });

  it("a gateway offline for a week converges when it comes back, with no operator action", async () => {
    const s = await start();
    await s.stopGateway();
    const NEW = "0c0c0c0c";
    expect((await entities(s, "ADD", [{ id: NEW, id_type: "rfid" }])).statusCode).toBe(204);
    expect((await entities(s, "REMOVE", [{ id: MEMBER, id_type: "rfid" }])).statusCode).toBe(204);
    s.clock.jump(7 * 24 * HOUR);
    await s.startGateway();
    await inSync(s);
    await s.brokerDown();
    expect((await tap(s, "reader-door", NEW)).granted).toBe(true);
    expect(await tap(s, "reader-door", MEMBER)).toMatchObject({ granted: false, reason: "offline_unknown" });
  });

  it("repairs changes lost in a broker restart: the gateway reports its version and gets a snapshot", async () => {
    const s = await start();
    const before = (await s.status()).keys.version;
    await s.stopGateway();
    // Two batches of 600 cards: more than one delta carries, so the catch-up is a snapshot.
    for (const base of [0, 600]) {
      const cards = Array.from({ length: 600 }, (_, i) => ({
        id: (base + i).toString(16).padStart(6, "0"),
        id_type: "rfid",
      }));
      expect((await entities(s, "ADD", cards)).statusCode).toBe(204);
    }
    // The broker restarts (its sessions and anything queued are gone) before the gateway is back.
    await s.brokerDown();
    await s.brokerUp();
    await s.startGateway();
    await inSync(s);
    const after = await s.status();
    expect(after.keys.version).toBeGreaterThan(before);
    expect(after.keys.grants).toBe(2 + 1_200);
    await s.brokerDown();
    expect((await tap(s, "reader-door", "0004af")).granted).toBe(true);
  });

  it("a door held open 5 minutes and a tamper switch reach the operator as signed webhooks within their windows", async () => {
    const s = await start();
    const board = s.sim.board("bus0", 1);
    expect((await tap(s, "reader-door", MEMBER)).granted).toBe(true);
    expect(board.openDoor(6)).toBe(true);
    await eventually(async () => expect((await s.gatewayDevice("door"))?.door_open).toBe(true), 10_000);
    // Five minutes pass (elapsed time too: the gateway measures how long a door stands open on it).
    s.clock.advance(5 * 60_000 + 1_000);
    board.setTamper(1, true);
    // The tamper alarm: its window is about a minute.
    await eventually(async () => {
      const rows = await hardwareReportRepository(s.db).eventsOf("gw-a1");
      expect(rows.map((r) => r.event)).toEqual(expect.arrayContaining(["tamper", "door_held_open"]));
    }, 20_000);
    s.clock.jump(61_000);
    await eventually(() => expect(types(receiver)).toContain("alarm"), 20_000);
    expect(types(receiver)).not.toContain("status");
    // The held door: a status event, its window about 5 minutes.
    s.clock.jump(5 * 60_000);
    await eventually(() => expect(types(receiver)).toContain("status"), 20_000);
    for (const r of receiver?.delivered ?? []) {
      const headers = Object.fromEntries(
        ["webhook-id", "webhook-timestamp", "webhook-signature"].map((h) => [h, String(r.headers[h])]),
      );
      // Verified with the stock library as of the time it was signed (the test's clock jumped ahead).
      const signedAt = Number(headers["webhook-timestamp"]) * 1000;
      const now = vi.spyOn(Date, "now").mockReturnValue(signedAt);
      let body: {
        type: string;
        data: { events: { device_id: string | null; details: { event?: string } }[] };
      };
      try {
        body = new Webhook(SECRET).verify(r.body, headers) as typeof body;
      } finally {
        now.mockRestore();
      }
      if (body.type === "status")
        expect(body.data.events).toContainEqual(
          expect.objectContaining({
            device_id: DOOR,
            details: expect.objectContaining({ event: "door_held_open" }),
          }),
        );
      if (body.type === "alarm")
        expect(body.data.events).toContainEqual(
          expect.objectContaining({ details: expect.objectContaining({ event: "tamper" }) }),
        );
    }
  });
});

function types(r: WebhookReceiver | null): string[] {
  return (r?.delivered ?? []).map((w) => (JSON.parse(w.body) as { type: string }).type);
}
