import net from "node:net";
import { type IClientOptions, MqttClient } from "mqtt";
import pino from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { DEFAULT_COMMAND_TIMEOUTS } from "../../cloud/devices/timeouts.ts";
import type { BrokerLimits } from "../../cloud/gateway-link/broker-limits.ts";
import { type EmbeddedBroker, startEmbeddedBroker } from "../../cloud/gateway-link/embedded-broker.ts";
import { type GatewayLink, startGatewayLink } from "../../cloud/gateway-link/gateway-link.ts";
import { applyManifest } from "../../cloud/manifest/apply-manifest.ts";
import { SiteManifest } from "../../cloud/manifest/manifest-schema.ts";
import { type CloudMetrics, counterValue, createCloudMetrics } from "../../cloud/metrics.ts";
import { topicFor } from "../../shared/wire/topics.ts";
import { fixtureSecretHash } from "../support/cloud-harness.ts";
import { eventually } from "../support/eventually.ts";
import { FakeClock } from "../support/fake-clock.ts";
import { fixtureManifest, SECRET } from "../support/fixture-site.ts";
import { varint } from "../support/raw-mqtt.ts";
import { watchSession } from "../support/session-watch.ts";
import { openTestDb, type TestDb } from "../support/test-db.ts";

const log = pino({ level: process.env.TEST_LOG_LEVEL ?? "silent" });
const CLOUD = { username: "cloud", password: "cloud-test-password" };
const MB = 1024 * 1024;

type Login = { username?: string; password?: string; clientId: string; localAddress?: string };
/** How a login ended: the CONNACK return code, or "closed" when the socket closed without one. */
type Outcome = number | "closed";

/** Resolves when the socket has closed, with the milliseconds since `since`. */
function closed(socket: net.Socket, since = performance.now()): Promise<number> {
  return new Promise((resolve) => {
    socket.on("error", () => {});
    socket.once("close", () => resolve(performance.now() - since));
  });
}

describe("the embedded broker on hostile ground", () => {
  let store: TestDb | undefined;
  let broker: EmbeddedBroker | undefined;
  let link: GatewayLink | undefined;
  const clients: MqttClient[] = [];
  const sockets: net.Socket[] = [];
  let prefix = "";
  let metrics: CloudMetrics;

  async function start(o: { limits?: Partial<BrokerLimits>; clock?: FakeClock } = {}) {
    metrics = createCloudMetrics();
    store = await openTestDb();
    await applyManifest(
      store.db,
      SiteManifest.parse(fixtureManifest(await fixtureSecretHash())),
      new FakeClock(),
    );
    prefix = `b${Math.random().toString(36).slice(2, 10)}`;
    broker = await startEmbeddedBroker({ db: store.db, log, port: 0, prefix, cloud: CLOUD, metrics, ...o });
    return broker.port;
  }

  /** The cloud's real link, under its own client id (the user name by default). */
  async function startLink(backlog?: { messages: number; bytes: number }): Promise<GatewayLink> {
    if (!store || !broker) throw new Error("start the broker first");
    link = await startGatewayLink(
      { brokerUrl: `mqtt://127.0.0.1:${broker.port}`, ...CLOUD, clientId: CLOUD.username, prefix, backlog },
      { db: store.db, clock: new FakeClock(), log, timeouts: DEFAULT_COMMAND_TIMEOUTS, metrics },
    );
    return link;
  }

  function client(o: Login, extra: IClientOptions = {}): MqttClient {
    const port = broker?.port ?? 0;
    const c = new MqttClient(
      () => net.createConnection({ host: "127.0.0.1", port, localAddress: o.localAddress }),
      {
        protocolVersion: 4,
        clientId: o.clientId,
        username: o.username,
        password: o.password,
        reconnectPeriod: 0,
        connectTimeout: 10_000,
        ...extra,
      },
    );
    clients.push(c);
    return c;
  }

  /** Logs in and returns the outcome; a refused login also waits for the broker to close the socket. */
  function login(o: Login, extra: IClientOptions = {}): Promise<{ outcome: Outcome; client: MqttClient }> {
    const c = client(o, extra);
    return new Promise((resolve) => {
      let code: Outcome = "closed";
      c.once("connect", () => resolve({ outcome: 0, client: c }));
      c.once("error", (err: Error & { code?: unknown }) => {
        if (typeof err.code === "number") code = err.code;
      });
      c.once("close", () => resolve({ outcome: code, client: c }));
    });
  }
  const outcome = async (o: Login, extra: IClientOptions = {}) => (await login(o, extra)).outcome;

  /** A raw socket to the broker, connected. */
  async function socket(): Promise<net.Socket> {
    const s = net.createConnection({ host: "127.0.0.1", port: broker?.port ?? 0 });
    sockets.push(s);
    await new Promise<void>((resolve, reject) => {
      s.once("connect", () => resolve());
      s.once("error", reject);
    });
    return s;
  }

  afterEach(async () => {
    for (const s of sockets.splice(0)) s.destroy();
    await Promise.all(clients.splice(0).map((c) => c.endAsync(true)));
    await link?.close();
    await broker?.close();
    await store?.drop();
    link = undefined;
    broker = undefined;
    store = undefined;
  });

  it("closes 8 sockets that each declare a 200 MB CONNECT from its header, and memory stays flat", async () => {
    await start();
    const header = Buffer.from([0x10, ...varint(200 * MB)]);
    const chunk = Buffer.alloc(64 * 1024, 0x61);
    /** Sends the header, then the body as fast as the socket takes it, until the broker closes it. */
    async function flood(): Promise<{ closedByBroker: boolean; bytes: number }> {
      const s = await socket();
      let done = false;
      const end = closed(s).then(() => {
        done = true;
      });
      let sent = 0;
      const pump = () => {
        while (!done && sent < 200 * MB) {
          sent += chunk.length;
          if (!s.write(chunk)) return void s.once("drain", pump);
        }
      };
      s.write(header);
      pump();
      await Promise.race([end, new Promise<void>((r) => s.once("drain", () => sent >= 200 * MB && r()))]);
      return { closedByBroker: done, bytes: s.bytesWritten };
    }

    await flood(); // warm-up: the first run compiles the code paths involved
    const before = process.memoryUsage();
    let peakRss = before.rss;
    const sampler = setInterval(() => {
      peakRss = Math.max(peakRss, process.memoryUsage.rss());
    }, 5);
    const floods = await Promise.all(Array.from({ length: 8 }, flood));
    clearInterval(sampler);
    const after = process.memoryUsage();

    for (const f of floods) expect(f.closedByBroker).toBe(true);
    const growth = {
      rssMb: (after.rss - before.rss) / MB,
      peakRssMb: (peakRss - before.rss) / MB,
      heapMb: (after.heapUsed + after.external - before.heapUsed - before.external) / MB,
      sentMb: floods.reduce((a, f) => a + f.bytes, 0) / MB,
    };
    log.info(growth, "memory growth under 8 oversized CONNECTs");
    expect(growth.rssMb, JSON.stringify(growth)).toBeLessThan(20);
    expect(growth.peakRssMb, JSON.stringify(growth)).toBeLessThan(20);
    expect(growth.heapMb, JSON.stringify(growth)).toBeLessThan(20);
    // The broker still serves.
    expect(await outcome({ username: "gw-a1", password: SECRET, clientId: "gw-a1" })).toBe(0);
  });

  it("closes a CONNECT over the CONNECT limit without an answer, and a connection sending a packet over the packet limit", async () => {
    await start();
    expect(await outcome({ username: "gw-a1", password: "x".repeat(5_000), clientId: "gw-a1" })).toBe(
      "closed",
    );
    const { outcome: ok, client: gw } = await login({
      username: "gw-a1",
      password: SECRET,
      clientId: "gw-a1",
    });
    expect(ok).toBe(0);
    const hb = topicFor(prefix, "gw-a1", "hb");
    await gw.publishAsync(hb, Buffer.alloc(200 * 1024, 0x61), { qos: 1 }); // under 256 KB: accepted
    const gone = new Promise<void>((r) => gw.once("close", () => r()));
    gw.publish(hb, Buffer.alloc(300 * 1024, 0x61), { qos: 1 });
    await gone;
    expect(gw.connected).toBe(false);
  });

  it("refuses a gateway's valid credentials under the cloud's client id, and the cloud's link stays connected", async () => {
    await start();
    const cloud = await startLink();
    const intact = watchSession(cloud.client, `${prefix}/probe`);
    expect(await outcome({ username: "gw-a1", password: SECRET, clientId: CLOUD.username })).toBe(2);
    expect(await outcome({ username: "gw-a1", password: "wrong", clientId: CLOUD.username })).toBe(2);
    expect(await outcome({ username: CLOUD.username, password: "wrong", clientId: CLOUD.username })).toBe(4);
    await intact();
  });

  it("refuses gateway A's credentials under gateway B's client id (and A's password under B's name); B stays connected", async () => {
    await start();
    const { outcome: ok, client: b } = await login({
      username: "gw-b1",
      password: SECRET,
      clientId: "gw-b1",
    });
    expect(ok).toBe(0);
    const intact = watchSession(b, topicFor(prefix, "gw-b1", "cmd"));
    expect(await outcome({ username: "gw-a1", password: SECRET, clientId: "gw-b1" })).toBe(2);
    expect(await outcome({ username: "gw-b1", password: "gw-a1-guess", clientId: "gw-b1" })).toBe(4);
    expect(await outcome({ username: undefined, password: undefined, clientId: "gw-b1" })).toBe(5);
    await intact();

    // The control: B's own credentials and id do take the session over, and the watch notices.
    expect(await outcome({ username: "gw-b1", password: SECRET, clientId: "gw-b1" })).toBe(0);
    await expect(intact()).rejects.toThrow();
  });

  it("refuses a user from an address after repeated failed logins, even with the right password, but not from other addresses, and not after the window", async () => {
    const clock = new FakeClock();
    await start({ clock, limits: { loginFailures: 3, loginWindowMs: 60_000 } });
    const right = { username: "gw-a1", password: SECRET, clientId: "gw-a1" };
    for (let i = 0; i < 3; i++) expect(await outcome({ ...right, password: `wrong-${i}` })).toBe(4);
    // Blocked: refused with 5 whatever the secret (a wrong one would otherwise get 4), socket closed.
    expect(await outcome(right)).toBe(5);
    expect(await outcome({ ...right, password: "wrong-again" })).toBe(5);
    expect(await outcome({ ...right, localAddress: "127.0.0.2" })).toBe(0);
    clock.advance(59_000);
    expect(await outcome(right)).toBe(5);
    clock.advance(1_000);
    expect(await outcome(right)).toBe(0);
  });

  it("counts failed logins per user and address: 21 bad logins for one gateway do not lock out another behind the same address", async () => {
    const clock = new FakeClock();
    await start({ clock }); // the default budget: 20 a minute
    const x = { username: "gw-a1", password: SECRET, clientId: "gw-a1" };
    const y = { username: "gw-a2", password: SECRET, clientId: "gw-a2" };
    for (let i = 0; i < 21; i++) expect(await outcome({ ...x, password: `guess-${i}` })).toBe(i < 20 ? 4 : 5);
    // X is refused unchecked from this address, its right secret included; Y, from the same address, is not.
    expect(await outcome(x)).toBe(5);
    expect(await outcome(y)).toBe(0);
    expect(await outcome({ ...y, password: "one-typo" })).toBe(4);
    expect(await counterValue(metrics.brokerRefused, { reason: "login_failed" })).toBe(21);
    expect(await counterValue(metrics.brokerRefused, { reason: "login_locked" })).toBe(2);
    clock.advance(60_000);
    expect(await outcome(x)).toBe(0);
  });

  it("holds at most the message limit for a gateway's session while it is away, drops and counts the rest, and delivers what it held", async () => {
    await start({ limits: { queuedMessages: 10 } });
    const cloud = await startLink();
    const cmd = topicFor(prefix, "gw-a1", "cmd");
    const session = { username: "gw-a1", password: SECRET, clientId: "gw-a1" };
    const first = await login(session, { clean: false });
    expect(first.outcome).toBe(0);
    await first.client.subscribeAsync(cmd, { qos: 1 });
    await first.client.endAsync();
    for (let i = 0; i < 25; i++) await cloud.client.publishAsync(cmd, `c${i}`, { qos: 1 });
    // aedes acknowledges a publish before it routes it: the last may still be on its way.
    await eventually(async () =>
      expect(await counterValue(metrics.brokerRefused, { reason: "queue_full" })).toBe(15),
    );
    expect(broker?.held("gw-a1").messages).toBe(10);
    // Back: the ten it held arrive (the first ten), and once acknowledged the session holds nothing.
    const got: string[] = [];
    const back = client(session, { clean: false });
    back.on("message", (_t, payload) => got.push(payload.toString()));
    await new Promise<void>((r) => back.once("connect", () => r()));
    await eventually(() => expect(got).toEqual(Array.from({ length: 10 }, (_, i) => `c${i}`)));
    await eventually(() => expect(broker?.held("gw-a1").messages).toBe(0));
    await cloud.client.publishAsync(cmd, "after", { qos: 1 });
    await eventually(() => expect(got.at(-1)).toBe("after"));
  });

  it("started with an earlier broker's persistence, keeps its sessions, their queued messages and the retained ones", async () => {
    await start();
    const cloud = await startLink();
    const cmd = topicFor(prefix, "gw-a1", "cmd");
    const config = topicFor(prefix, "gw-a1", "config");
    const session = { username: "gw-a1", password: SECRET, clientId: "gw-a1" };
    const first = await login(session, { clean: false });
    await first.client.subscribeAsync(cmd, { qos: 1 });
    await first.client.endAsync();
    await cloud.client.publishAsync(cmd, "queued", { qos: 1 });
    await cloud.client.publishAsync(config, "retained", { qos: 1, retain: true });
    await eventually(() => expect(broker?.held("gw-a1").messages).toBe(1));
    await link?.close();
    link = undefined;
    // The broker restarts on its port, with what the last one kept (Mosquitto with `persistence true`).
    const kept = broker?.persistence;
    const port = broker?.port ?? 0;
    await broker?.close();
    broker = await startEmbeddedBroker({
      db: store!.db,
      log,
      port,
      prefix,
      cloud: CLOUD,
      metrics,
      persistence: kept,
    });
    const got: string[] = [];
    const back = client(session, { clean: false });
    back.on("message", (_t, payload) => got.push(payload.toString()));
    await new Promise<void>((r) => back.once("connect", (ack) => r(expect(ack.sessionPresent).toBe(true))));
    await eventually(() => expect(got).toEqual(["queued"]));
    await back.subscribeAsync(config, { qos: 1 });
    await eventually(() => expect(got).toEqual(["queued", "retained"]));
  });

  it("holds at most the byte limit for a gateway's session, and keeps a connected gateway that acknowledges nothing connected", async () => {
    await start({ limits: { queuedBytes: 10_000 } });
    const cloud = await startLink();
    const cmd = topicFor(prefix, "gw-a1", "cmd");
    const { outcome: ok, client: gw } = await login(
      { username: "gw-a1", password: SECRET, clientId: "gw-a1" },
      { clean: false },
    );
    expect(ok).toBe(0);
    await gw.subscribeAsync(cmd, { qos: 1 });
    // A gateway that takes its messages and never acknowledges them (no PUBACK).
    gw.handleMessage = () => {};
    for (let i = 0; i < 8; i++) await cloud.client.publishAsync(cmd, Buffer.alloc(3_000, 0x61), { qos: 1 });
    await eventually(async () =>
      expect(await counterValue(metrics.brokerRefused, { reason: "queue_full" })).toBe(5),
    );
    expect(broker?.held("gw-a1")).toEqual({ messages: 3, bytes: 9_000 });
    expect(gw.connected).toBe(true);
  });

  it("refuses a PUBLISH with QoS 2 from its first byte and closes the connection", async () => {
    await start();
    const { outcome: ok, client: gw } = await login({
      username: "gw-a1",
      password: SECRET,
      clientId: "gw-a1",
    });
    expect(ok).toBe(0);
    const gone = new Promise<void>((r) => gw.once("close", () => r()));
    gw.publish(topicFor(prefix, "gw-a1", "up"), "{}", { qos: 2 });
    await gone;
    expect(await counterValue(metrics.brokerRefused, { reason: "qos2" })).toBe(1);
    expect(broker?.held("gw-a1").messages).toBe(0);
  });

  it("caps what one gateway has waiting to be applied: the rest is dropped unacknowledged and counted, and its other messages go on", async () => {
    await start();
    await startLink({ messages: 10, bytes: 1024 * 1024 });
    const { client: gw } = await login({ username: "gw-a1", password: SECRET, clientId: "gw-a1" });
    const acked: number[] = [];
    gw.on("message", (_t, raw) => acked.push(...(JSON.parse(raw.toString()) as { seqs: number[] }).seqs));
    await gw.subscribeAsync(topicFor(prefix, "gw-a1", "ack"), { qos: 1 });
    const report = (seq: number) =>
      JSON.stringify({
        type: "hardware_event",
        gateway_id: "gw-a1",
        seq,
        observed_at: new Date().toISOString(),
        device_id: null,
        source: "bus0",
        event: "reset",
      });
    // The store is busy (a long transaction holds SQLite's one connection): nothing can be applied.
    let release!: () => void;
    const held = new Promise<void>((r) => {
      release = r;
    });
    const busy = store?.db.transaction().execute(() => held);
    for (let seq = 1; seq <= 50; seq++)
      await gw.publishAsync(topicFor(prefix, "gw-a1", "up"), report(seq), { qos: 1 });
    await eventually(async () =>
      expect(await counterValue(metrics.gatewayRefused, { type: "up", reason: "backlog" })).toBe(40),
    );
    release();
    await busy;
    // The ten it kept are applied and acknowledged; the forty come again from the gateway's outbox.
    await eventually(() =>
      expect([...acked].sort((x, y) => x - y)).toEqual(Array.from({ length: 10 }, (_, i) => i + 1)),
    );
    await gw.publishAsync(topicFor(prefix, "gw-a1", "up"), report(11), { qos: 1 });
    await eventually(() => expect(acked).toContain(11));
  });

  it("closes a socket that sends nothing, or only part of a CONNECT, after the connect timeout", async () => {
    await start({ limits: { connectTimeoutMs: 300 } });
    const silent = await socket();
    const partial = await socket();
    const since = performance.now();
    partial.write(Buffer.from([0x10, 40, 0x00])); // a CONNECT of 40 bytes, 1 of them sent
    const [silentMs, partialMs] = await Promise.all([closed(silent, since), closed(partial, since)]);
    for (const ms of [silentMs, partialMs]) {
      expect(ms).toBeGreaterThanOrEqual(250);
      expect(ms).toBeLessThan(4_000); // the 5 s default would not have fired yet
    }
  });
});
