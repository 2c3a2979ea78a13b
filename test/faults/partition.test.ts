import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { accessEventRepository } from "../../cloud/key-sync/access-event-repository.ts";
import { keySyncRepository } from "../../cloud/key-sync/key-sync-repository.ts";
import type { DeviceView, GatewayStatus } from "../../gateway/control/control-api.ts";
import { DEAD_AFTER_MS, UNHEALTHY_AFTER_MS } from "../../shared/domain/health.ts";
import { eventually } from "../support/eventually.ts";
import { fx } from "../support/fixture-site.ts";
import { WebhookReceiver } from "../support/webhook-receiver.ts";
import { type DaemonSite, type OutboxRow, startDaemonSite } from "./support/daemon.ts";
import { accessSite, allDelivered, duplicates, upTo } from "./support/delivery.ts";
import { FaultProxy } from "./support/fault-proxy.ts";

// A partition longer than the MQTT keepalive (15 s): a TCP proxy that stops moving bytes both ways and keeps
// both sockets open, as a stalled mobile modem does. Health is derived from the cloud's time, so the cloud's
// clock is advanced rather than waited for; the daemon's own keepalive runs in real time.

const WL = "fa000000-0000-4000-8000-000000000001";
const HOOK = "fa000000-0000-4000-8000-0000000000aa";
const MEMBER = "04a1b2c3d4";
const STRANGER = "ffee";
const LOCKER = fx.device("L1", "1"); // reader-1's locker
const COMMANDED = fx.device("L1", "2"); // the command sent into the partition
const HEARD = [...["1", "2", "3", "4", "5"].map((a) => fx.device("L1", a)), fx.guard("gw-a1")];

type ConnectionEvent = { device_id: string; occurred_at: string; details: { online: boolean } };

describe("a partition longer than the keepalive (the real daemon behind a stalled link)", () => {
  let s: DaemonSite;
  let proxy: FaultProxy;
  let receiver: WebhookReceiver;
  beforeAll(async () => {
    receiver = await new WebhookReceiver(() => new Date()).start();
    s = await startDaemonSite({
      store: "postgres",
      siteEvents: true,
      // The command sent into the partition expires in real time too, long before the link heals (the partition
      // outlasts a 15 s keepalive): the daemon refuses it on its own estimate of the cloud's clock even when the
      // cloud's fresh answer takes longer than the session's sync wait on a busy machine. The cloud's jumped
      // clock alone would leave that estimate two hours behind.
      timeouts: { deliveryMs: 10_000 },
      manifest: accessSite({ whitelist: WL, cards: [MEMBER], hook: { id: HOOK, url: receiver.url } }),
      brokerUrlFor: async (url) => {
        const p = await FaultProxy.before(url, 23);
        proxy = p.proxy;
        return p.url;
      },
    });
  });
  afterAll(async () => {
    await s?.stop();
    await proxy?.stop();
    await receiver?.stop();
  });

  const health = async (id: string) =>
    (await s.site.api("GET", `/device/v1/devices/${id}`)).json().heartbeat_v2?.health as string;
  let partitionAt = "";
  /** The connection events since the partition began (the start-up's own came before). */
  const connections = () =>
    receiver.delivered.flatMap((r) => {
      const p = JSON.parse(r.body) as { type: string; data: { events: ConnectionEvent[] } };
      return p.type === "connection" ? p.data.events.filter((e) => e.occurred_at >= partitionAt) : [];
    });
  const board = () => s.site.sim.board("bus0", 1);
  const requests = (kind: string, channel: number) =>
    board().received.filter((r) => r.kind === kind && "channel" in r && r.channel === channel);

  /** Synced keys, healthy devices, and the connection watch's first sight of each (online, no event). */
  async function steady() {
    await s.ready();
    await eventually(async () => {
      const v = await keySyncRepository(s.site.db).versionsOf("gw-a1");
      expect(v.version).toBeGreaterThan(0);
      expect(v.confirmed).toBe(v.version);
      expect(await health(LOCKER)).toBe("HEALTHY");
      const seen = await s.site.db.selectFrom("device_connections").selectAll().execute();
      expect(seen.filter((c) => HEARD.includes(c.device_id) && c.online === 1)).toHaveLength(HEARD.length);
    }, 40_000);
    await allDelivered(s);
  }

  // One partition, followed step by step: each step relies on the one before.
  let commandId = "";
  let held: OutboxRow[] = [];
  let recoveryMs = 0;

  it("the cloud, on its own clock, shows the devices UNHEALTHY then DEAD and ends the command sent into the partition ERROR", async () => {
    await steady();
    partitionAt = s.site.clock.now().toISOString();
    proxy.blackhole();
    const post = await s.site.api("POST", `/device/v1/devices/${COMMANDED}/commands`, { command: "lock" });
    expect(post.statusCode, post.body).toBe(200);
    commandId = post.json().id as string;
    s.site.clock.advance(UNHEALTHY_AFTER_MS + 1_000);
    await eventually(async () => expect(await health(LOCKER)).toBe("UNHEALTHY"), 10_000);
    s.site.clock.advance(DEAD_AFTER_MS - UNHEALTHY_AFTER_MS);
    await eventually(async () => expect(await health(LOCKER)).toBe("DEAD"), 10_000);
    await eventually(async () => {
      const c = (await s.site.api("GET", `/device/v1/commands/${commandId}`)).json();
      expect(c.state.value).toBe("ERROR");
    }, 10_000);
    await eventually(() => {
      const offline = connections().filter((e) => !e.details.online);
      expect(offline.map((e) => e.device_id).sort()).toEqual([...HEARD].sort());
    }, 20_000);
  }, 120_000);

  it("the daemon, once its keepalive gives up, decides taps from its key cache: the member parks, the stranger is refused", async () => {
    await eventually(
      async () => expect((await s.daemon.control<GatewayStatus>("status")).broker.connected).toBe(false),
      60_000,
      500,
    );
    const locks = requests("lock", 1).length;
    s.site.sim.reader("reader-1").tap(MEMBER);
    await eventually(() => expect(board().channel(1).latch).toBe("locked"), 20_000);
    expect(requests("lock", 1)).toHaveLength(locks + 1);
    s.site.sim.reader("reader-1").tap(STRANGER);
    for (const e of ["door_opened", "door_closed", "door_opened", "door_closed"] as const)
      board().event(7, e);
    held = await eventually(() => {
      const rows = s.daemon.outbox();
      const taps = rows.filter((r) => r.body.card_id !== undefined);
      expect(taps.map((r) => [r.body.card_id, r.body.granted])).toEqual([
        [MEMBER, true],
        [STRANGER, false],
      ]);
      expect(rows.filter((r) => r.source === "bus0/1/7")).toHaveLength(4);
      return rows;
    }, 20_000);
    expect(requests("lock", 1)).toHaveLength(locks + 1); // the stranger moved nothing
  }, 120_000);

  it("after healing, every message of the outbox is applied once: no gap, no duplicate", async () => {
    proxy.heal();
    const healedAt = Date.now();
    const d = await allDelivered(s, 90_000);
    recoveryMs = Date.now() - healedAt; // measured, not asserted
    expect(d.applied).toEqual(upTo(d.sent));
    expect(held.every((r) => d.applied.includes(r.seq))).toBe(true);
    expect(duplicates(d.hardwareEvents)).toEqual([]);
    expect(duplicates(d.accessEvents)).toEqual([]);
    const taps = await accessEventRepository(s.site.db).atDevice(LOCKER);
    expect(taps.map((t) => [t.card_id, t.granted])).toEqual([
      [MEMBER, 1],
      [STRANGER, 0],
    ]);
    console.info(
      `partition: ${d.sent} sent, ${d.applied.length} applied, ${held.length} held during the partition ` +
        `(${held.map((r) => r.type).join(", ")}), ` +
        `0 duplicated, all applied ${recoveryMs} ms after healing`,
    );
  }, 120_000);

  it("the expired command reaches the daemon after healing and is refused: the latch never moves", async () => {
    await eventually(
      async () =>
        expect((await s.daemon.control<DeviceView>("device", { alias: "2" })).last_command).toMatchObject({
          command_id: commandId,
          result: "ERROR",
          reason: expect.stringMatching(/deadline/),
        }),
      30_000,
    );
    expect(requests("lock", 2)).toHaveLength(0);
    expect(board().channel(2).latch).toBe("unlocked");
  });

  it("back online: one connection webhook each way per device", async () => {
    await eventually(async () => {
      expect(await health(LOCKER)).toBe("HEALTHY");
      const online = connections().filter((e) => e.details.online);
      expect(online.map((e) => e.device_id).sort()).toEqual([...HEARD].sort());
    }, 30_000);
    const seen = connections().map((e) => `${e.occurred_at} ${e.device_id.slice(0, 4)} ${e.details.online}`);
    expect(seen, seen.join("\n")).toHaveLength(2 * HEARD.length);
  });
});
