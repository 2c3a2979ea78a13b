import type { FastifyInstance } from "fastify";
import type { MqttClient } from "mqtt";
import pino from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { buildApp } from "../../cloud/app.ts";
import { DEFAULT_COMMAND_TIMEOUTS } from "../../cloud/devices/timeouts.ts";
import { type EmbeddedBroker, startEmbeddedBroker } from "../../cloud/gateway-link/embedded-broker.ts";
import { type GatewayLink, startGatewayLink } from "../../cloud/gateway-link/gateway-link.ts";
import { gatewayOutboxRepository } from "../../cloud/gateway-link/gateway-outbox-repository.ts";
import { gatewayRepository } from "../../cloud/gateway-link/gateway-repository.ts";
import { connectMqtt } from "../../cloud/gateway-link/mqtt-client.ts";
import { OFFLINE_GRACE_MS } from "../../cloud/gateway-link/offline-grace.ts";
import { applyManifest } from "../../cloud/manifest/apply-manifest.ts";
import { SiteManifest } from "../../cloud/manifest/manifest-schema.ts";
import { connectionRepository } from "../../cloud/site-events/connection-repository.ts";
import { createConnectionWatch } from "../../cloud/site-events/connection-watch.ts";
import { DEAD_AFTER_MS } from "../../shared/domain/health.ts";
import { CommandRequest } from "../../shared/wire/messages.ts";
import { topicFor } from "../../shared/wire/topics.ts";
import { fixtureSecretHash, ISSUER, TOKEN_SECRET } from "../support/cloud-harness.ts";
import { eventually } from "../support/eventually.ts";
import { FakeClock } from "../support/fake-clock.ts";
import { CLIENTS, fixtureManifest, fx, SECRET } from "../support/fixture-site.ts";
import { openTestDb, type TestDb } from "../support/test-db.ts";

const MOSQUITTO_URL = process.env.TEST_MOSQUITTO_URL ?? "mqtt://127.0.0.1:1883";
const log = pino({ level: process.env.TEST_LOG_LEVEL ?? "silent" });
const CLOUD = { username: "cloud", password: "cloud-test-password" };

type Site = {
  app: FastifyInstance;
  link: GatewayLink;
  store: TestDb;
  broker: EmbeddedBroker | null;
  url: string;
  prefix: string;
  clients: MqttClient[];
  token: string;
  clock: FakeClock;
  /** The channel of each gateway message the link has handled, in order. */
  handled: string[];
};

/**
 * The client id a test client logging in as `username` uses: the embedded broker admits each user under
 * its own id only; on the shared Mosquitto a unique one keeps parallel runs apart.
 */
const clientIdFor = (site: Site, username: string) =>
  site.broker ? username : `${username}-${Math.random().toString(36).slice(2, 10)}`;

/** Connects a test client that plays gateway `gatewayId`, with its credentials. */
async function gatewayClient(site: Site, gatewayId: string, password = SECRET): Promise<MqttClient> {
  const c = connectMqtt(site.url, {
    clientId: clientIdFor(site, gatewayId),
    username: gatewayId,
    password,
    reconnectPeriod: 0,
  });
  site.clients.push(c);
  await new Promise<void>((resolve, reject) => {
    c.once("connect", () => resolve());
    c.once("error", reject);
  });
  return c;
}

for (const brokerKind of ["embedded aedes", "mosquitto"] as const) {
  describe(`gateway link over ${brokerKind}`, () => {
    let site: Site;

    beforeEach(async () => {
      const store = await openTestDb();
      const clock = new FakeClock();
      await applyManifest(store.db, SiteManifest.parse(fixtureManifest(await fixtureSecretHash())), clock);
      let broker: EmbeddedBroker | null = null;
      // Each test gets its own topic prefix, so runs sharing the real broker never see each other.
      const prefix = `t${Math.random().toString(36).slice(2, 10)}`;
      let url = MOSQUITTO_URL;
      if (brokerKind === "embedded aedes") {
        broker = await startEmbeddedBroker({
          db: store.db,
          log,
          port: 0,
          prefix,
          cloud: { ...CLOUD, clientId: `cloud-${prefix}` },
        });
        url = `mqtt://127.0.0.1:${broker.port}`;
      }
      const handled: string[] = [];
      const link = await startGatewayLink(
        { brokerUrl: url, ...CLOUD, clientId: `cloud-${prefix}`, prefix },
        {
          db: store.db,
          clock,
          log,
          timeouts: DEFAULT_COMMAND_TIMEOUTS,
          onApplied: (_gw, channel) => handled.push(channel),
        },
      );
      const app = await buildApp({
        db: store.db,
        clock,
        log,
        gateways: link,
        tokenSecret: TOKEN_SECRET,
        issuer: ISSUER,
        timeouts: DEFAULT_COMMAND_TIMEOUTS,
      });
      const res = await app.inject({
        method: "POST",
        url: "/oauth2/token",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        payload: `grant_type=client_credentials&client_id=${CLIENTS.admin}&client_secret=${SECRET}`,
      });
      site = {
        app,
        link,
        store,
        broker,
        url,
        prefix,
        clients: [],
        token: res.json().access_token,
        clock,
        handled,
      };
    });

    afterEach(async () => {
      for (const c of site.clients) await c.endAsync(true);
      await site.app.close();
      await site.link.close();
      await site.broker?.close();
      await site.store.drop();
    });

    const api = (method: "GET" | "POST", url: string, payload?: object) =>
      site.app.inject({ method, url, payload, headers: { authorization: `Bearer ${site.token}` } });

    it("carries a lock from the API to the gateway and its progress back to SUCCESS", async () => {
      const gw = await gatewayClient(site, "gw-a1");
      const acks: number[] = [];
      const commands: CommandRequest[] = [];
      gw.on("message", (topic, raw) => {
        const body = JSON.parse(raw.toString());
        if (topic.endsWith("/ack")) acks.push(...body.seqs);
        else commands.push(CommandRequest.parse(body));
      });
      await gw.subscribeAsync(
        [topicFor(site.prefix, "gw-a1", "cmd"), topicFor(site.prefix, "gw-a1", "ack")],
        { qos: 1 },
      );

      const device = fx.device("L1", "1");
      const post = await api("POST", `/device/v1/devices/${device}/commands`, { command: "lock" });
      expect(post.statusCode).toBe(200);
      expect(post.json().state.value).toBe("SENT");
      const cmd = await eventually(() => {
        expect(commands).toHaveLength(1);
        return commands[0] as CommandRequest;
      });
      expect(cmd).toMatchObject({ command_id: post.json().id, device_id: device, name: "lock" });

      const up = (seq: number, state: "RECEIVED" | "SUCCESS", extra = {}) =>
        gw.publishAsync(
          topicFor(site.prefix, "gw-a1", "up"),
          JSON.stringify({
            type: "command_progress",
            gateway_id: "gw-a1",
            seq,
            observed_at: new Date().toISOString(),
            command_id: cmd.command_id,
            device_id: device,
            state,
            ...extra,
          }),
          { qos: 1 },
        );
      await up(1, "RECEIVED");
      await up(2, "SUCCESS", { lock_state: "LOCKED" });

      const done = await eventually(async () => {
        const r = (await api("GET", `/device/v1/commands/${cmd.command_id}`)).json();
        expect(r.state.value).toBe("SUCCESS");
        return r;
      });
      expect(done.events.map((e: { name: string }) => e.name)).toEqual([
        "REQUEST_INITIATED",
        "REQUEST_SENT",
        "RESPONSE_COMMAND_RECEIVED",
        "RESPONSE_DEVICE_LOCKED",
      ]);
      const dev = (await api("GET", `/device/v1/devices/${device}`)).json();
      expect(dev.state.value).toBe("LOCKED");
      expect(dev.lock_state).toBe("LOCKED");
      await eventually(() => expect([...acks].sort()).toEqual([1, 2]));

      // A redelivered message (its ack was lost) is acknowledged again and applied no second time.
      await up(2, "SUCCESS", { lock_state: "LOCKED" });
      await eventually(() => expect(acks.filter((s) => s === 2)).toHaveLength(2));
      const again = (await api("GET", `/device/v1/commands/${cmd.command_id}`)).json();
      expect(again.events).toHaveLength(4);
    });

    it("drops malformed messages and keeps serving the next one", async () => {
      const gw = await gatewayClient(site, "gw-a1");
      const topic = topicFor(site.prefix, "gw-a1", "up");
      await gw.publishAsync(topic, "not json", { qos: 1 });
      await gw.publishAsync(topic, JSON.stringify({ type: "command_progress", seq: "x" }), { qos: 1 });
      await gw.publishAsync(
        topicFor(site.prefix, "gw-a1", "hb"),
        JSON.stringify({
          gateway_id: "gw-a1",
          sent_at: new Date().toISOString(),
          devices: [{ device_id: fx.device("L1", "2"), reachable: true }],
        }),
        { qos: 0 },
      );
      await eventually(async () => {
        const dev = (await api("GET", `/device/v1/devices/${fx.device("L1", "2")}`)).json();
        expect(dev.heartbeat_v2?.health).toBe("HEALTHY");
      });
    });

    it("acknowledges and drops a message that names another gateway or cannot be used, so it is not resent forever", async () => {
      const gw = await gatewayClient(site, "gw-a1");
      const acks: number[] = [];
      gw.on("message", (_t, raw) => acks.push(...JSON.parse(raw.toString()).seqs));
      await gw.subscribeAsync(topicFor(site.prefix, "gw-a1", "ack"), { qos: 1 });
      const topic = topicFor(site.prefix, "gw-a1", "up");
      const device = fx.device("L1", "1");
      const foreign = {
        type: "device_state",
        gateway_id: "gw-a2",
        seq: 7,
        observed_at: new Date().toISOString(),
        device_id: device,
        lock_state: "LOCKED",
      };
      await gw.publishAsync(topic, JSON.stringify(foreign), { qos: 1 });
      await gw.publishAsync(topic, JSON.stringify({ type: "no_such_type", seq: 8 }), { qos: 1 });
      await eventually(() => expect([...acks].sort()).toEqual([7, 8]));
      const dev = (await api("GET", `/device/v1/devices/${device}`)).json();
      expect(dev.lock_state).toBe("UNLOCKED");
      const outboxes = gatewayOutboxRepository(site.store.db);
      const applied = [];
      for (const gw of await gatewayRepository(site.store.db).allIds())
        applied.push(...(await outboxes.appliedOf(gw)));
      expect(applied).toEqual([]);
    });

    it("answers a heartbeat's probe with an ack echoing it, stamped with the cloud's time; a beat without one gets none", async () => {
      const gw = await gatewayClient(site, "gw-a1");
      const answers: unknown[] = [];
      gw.on("message", (_t, raw) => answers.push(JSON.parse(raw.toString())));
      await gw.subscribeAsync(topicFor(site.prefix, "gw-a1", "ack"), { qos: 1 });
      const beat = (extra: object) =>
        gw.publishAsync(
          topicFor(site.prefix, "gw-a1", "hb"),
          JSON.stringify({
            gateway_id: "gw-a1",
            sent_at: site.clock.now().toISOString(),
            devices: [],
            ...extra,
          }),
          { qos: 1 },
        );
      const handled = site.handled.filter((c) => c === "hb").length;
      await beat({});
      await beat({ sync: "probe-1" });
      await eventually(() => expect(site.handled.filter((c) => c === "hb")).toHaveLength(handled + 2));
      await eventually(() =>
        expect(answers).toEqual([{ seqs: [], sync: "probe-1", sent_at: site.clock.now().toISOString() }]),
      );
    });

    it("delivers a command again when its gateway announces itself online after subscribing", async () => {
      const gw = await gatewayClient(site, "gw-a1");
      // The gateway is connected but not subscribed yet (a broker that restarted lost its session):
      // the command published now finds no one.
      const device = fx.device("L1", "2");
      const post = await api("POST", `/device/v1/devices/${device}/commands`, { command: "lock" });
      expect(post.json().state.value).toBe("SENT");
      const commands: CommandRequest[] = [];
      gw.on("message", (_t, raw) => commands.push(CommandRequest.parse(JSON.parse(raw.toString()))));
      await gw.subscribeAsync(topicFor(site.prefix, "gw-a1", "cmd"), { qos: 1 });
      await gw.publishAsync(
        topicFor(site.prefix, "gw-a1", "status"),
        JSON.stringify({ gateway_id: "gw-a1", online: true, at: new Date().toISOString() }),
        { qos: 1, retain: true },
      );
      await eventually(() => expect(commands.map((c) => c.command_id)).toContain(post.json().id));
    });

    it("sends a gateway its map, then its waiting commands, when it announces itself online after the retained map was lost", async () => {
      // A broker restarted without persistence has lost the retained map: clear it the same way.
      await site.link.client.publishAsync(topicFor(site.prefix, "gw-a1", "config"), "", {
        qos: 1,
        retain: true,
      });
      const gw = await gatewayClient(site, "gw-a1");
      const device = fx.device("L1", "2");
      const post = await api("POST", `/device/v1/devices/${device}/commands`, { command: "lock" });
      const seen: string[] = [];
      gw.on("message", (topic, raw) => {
        if (raw.length === 0) return;
        if (topic.endsWith("/config")) seen.push(`map ${JSON.parse(raw.toString()).version}`);
        if (topic.endsWith("/cmd"))
          seen.push(`cmd ${CommandRequest.parse(JSON.parse(raw.toString())).command_id}`);
      });
      await gw.subscribeAsync({
        [topicFor(site.prefix, "gw-a1", "config")]: { qos: 1 },
        [topicFor(site.prefix, "gw-a1", "cmd")]: { qos: 1 },
      });
      await gw.publishAsync(
        topicFor(site.prefix, "gw-a1", "status"),
        JSON.stringify({ gateway_id: "gw-a1", online: true, at: new Date().toISOString() }),
        { qos: 1, retain: true },
      );
      await eventually(() => expect(seen).toContain(`cmd ${post.json().id}`));
      expect(seen[0]).toMatch(/^map /);
    });

    it("publishes a gateway's new device map when a manifest changes it while the cloud runs", async () => {
      const gw = await gatewayClient(site, "gw-a1");
      const maps: { version: string; devices: { alias: string }[] }[] = [];
      gw.on("message", (_t, raw) => maps.push(JSON.parse(raw.toString())));
      await gw.subscribeAsync(topicFor(site.prefix, "gw-a1", "config"), { qos: 1 });
      await eventually(() => expect(maps).toHaveLength(1)); // the retained map
      const manifest = fixtureManifest(await fixtureSecretHash());
      manifest.operators[0]?.locations?.[0]?.gateways?.[0]?.devices?.push({
        alias: "9",
        type: "LOCKER",
        bus: { board: 1, channel: 8 },
      });
      await applyManifest(site.store.db, SiteManifest.parse(manifest), site.clock);
      site.clock.advance(1_000); // the cloud's check of the stored map versions
      await eventually(() => {
        expect(maps).toHaveLength(2);
        expect(maps[1]?.devices.map((d) => d.alias)).toContain("9");
      });
      expect(maps[1]?.version).not.toBe(maps[0]?.version);
    });

    it("takes a gateway's devices offline at once when its Last Will arrives", async () => {
      const will = { gateway_id: "gw-a1", online: false, at: new Date().toISOString() };
      const gw = connectMqtt(site.url, {
        clientId: clientIdFor(site, "gw-a1"),
        username: "gw-a1",
        password: SECRET,
        reconnectPeriod: 0,
        will: {
          topic: topicFor(site.prefix, "gw-a1", "status"),
          payload: Buffer.from(JSON.stringify(will)),
          qos: 1,
          retain: true,
        },
      });
      await new Promise<void>((r) => gw.once("connect", () => r()));
      await gw.publishAsync(
        topicFor(site.prefix, "gw-a1", "status"),
        JSON.stringify({ gateway_id: "gw-a1", online: true, at: new Date().toISOString() }),
        { qos: 1, retain: true },
      );
      const guard = fx.guard("gw-a1");
      await eventually(async () =>
        expect((await api("GET", `/device/v1/devices/${guard}`)).json().heartbeat_v2?.health).toBe("HEALTHY"),
      );
      site.clock.advance(1_000);
      gw.stream.destroy(); // an ungraceful drop: the broker publishes the will
      await eventually(async () =>
        expect((await api("GET", `/device/v1/devices/${guard}`)).json().heartbeat_v2?.health).toBe("DEAD"),
      );
      // Clear the retained status so the shared broker keeps nothing from this test.
      const cleaner = await gatewayClient(site, "gw-a1");
      await cleaner.publishAsync(topicFor(site.prefix, "gw-a1", "status"), "", { qos: 1, retain: true });
    });

    it("keeps an online gateway up when an earlier session's Last Will is published late", async () => {
      const gw = await gatewayClient(site, "gw-a1");
      const status = (online: boolean, sync: string) =>
        gw.publishAsync(
          topicFor(site.prefix, "gw-a1", "status"),
          JSON.stringify({ gateway_id: "gw-a1", online, at: new Date().toISOString(), sync }),
          { qos: 1, retain: true },
        );
      const guard = fx.guard("gw-a1");
      const health = async () =>
        (await api("GET", `/device/v1/devices/${guard}`)).json().heartbeat_v2?.health;
      await status(true, "session-2");
      await eventually(async () => expect(await health()).toBe("HEALTHY"));
      site.clock.advance(1_000);
      // The Will of session 1, taken over by session 2 after a partition, reaches the cloud after `online`.
      await status(false, "session-1");
      await status(false, "session-2"); // then this session's own: the two arrive in this order
      // Each offline waits out its grace, then meets the session rule.
      await eventually(() => expect(site.handled.filter((c) => c === "status")).toHaveLength(3));
      site.clock.advance(OFFLINE_GRACE_MS);
      await eventually(async () => expect(await health()).toBe("DEAD"));
      const gateways = await gatewayRepository(site.store.db).find("gw-a1");
      expect(gateways).toMatchObject({ online: 0, session: "session-2" });
      await gw.publishAsync(topicFor(site.prefix, "gw-a1", "status"), "", { qos: 1, retain: true });
      await gw.endAsync();
    });

    it("keeps a stalled gateway's devices online when its old session's Will arrives just before the new session's online", async () => {
      const gw = await gatewayClient(site, "gw-a1");
      const locker = fx.device("L1", "1");
      const publish = (channel: "status" | "hb", msg: object) =>
        gw.publishAsync(topicFor(site.prefix, "gw-a1", channel), JSON.stringify(msg), {
          qos: 1,
          retain: channel === "status",
        });
      const status = (online: boolean, sync: string) =>
        publish("status", { gateway_id: "gw-a1", online, at: site.clock.now().toISOString(), sync });
      const heartbeat = () =>
        publish("hb", {
          gateway_id: "gw-a1",
          sent_at: site.clock.now().toISOString(),
          devices: [{ device_id: locker, reachable: true }],
        });
      const health = async () =>
        (await api("GET", `/device/v1/devices/${locker}`)).json().heartbeat_v2?.health as string;
      // What the connection watch notifies of the locker, round by round: the `connection` webhooks.
      const watch = createConnectionWatch({ db: site.store.db, clock: site.clock, log });
      const notified: boolean[] = [];
      const round = async () => {
        await watch.check();
        const now = (await connectionRepository(site.store.db).notified()).get(locker);
        if (now !== undefined && now !== notified.at(-1)) notified.push(now);
      };

      await status(true, "session-1");
      await heartbeat();
      await eventually(async () => expect(await health()).toBe("HEALTHY"));
      await round();
      // The link stalls: silence makes the locker DEAD.
      site.clock.advance(DEAD_AFTER_MS + 1_000);
      await round();
      // It heals: session 1's held heartbeat arrives, then its close makes the broker publish its Will, while
      // the new session's `online` is a round trip behind.
      await heartbeat();
      await eventually(async () => expect(await health()).toBe("HEALTHY"));
      await round();
      site.clock.advance(100);
      await status(false, "session-1");
      await status(true, "session-2");
      await eventually(async () =>
        expect(await gatewayRepository(site.store.db).find("gw-a1")).toMatchObject({ session: "session-2" }),
      );
      await round();
      await heartbeat();
      site.clock.advance(OFFLINE_GRACE_MS);
      await eventually(async () => expect(await health()).toBe("HEALTHY"));
      await round();
      expect(notified).toEqual([true, false, true]);
      expect(await gatewayRepository(site.store.db).find("gw-a1")).toMatchObject({
        online: 1,
        session: "session-2",
      });
      await gw.publishAsync(topicFor(site.prefix, "gw-a1", "status"), "", { qos: 1, retain: true });
    });

    it("never applies a gateway's report about a device another gateway owns (S30)", async () => {
      const tokenB = (
        await site.app.inject({
          method: "POST",
          url: "/oauth2/token",
          headers: { "content-type": "application/x-www-form-urlencoded" },
          payload: `grant_type=client_credentials&client_id=${CLIENTS.other}&client_secret=${SECRET}`,
        })
      ).json().access_token;
      const deviceB = fx.device("B1", "1");
      const post = await site.app.inject({
        method: "POST",
        url: `/device/v1/devices/${deviceB}/commands`,
        payload: { command: "lock" },
        headers: { authorization: `Bearer ${tokenB}` },
      });
      const commandId = post.json().id;
      const intruder = await gatewayClient(site, "gw-a1");
      const acked: number[] = [];
      intruder.on("message", (_t, raw) => acked.push(...JSON.parse(raw.toString()).seqs));
      await intruder.subscribeAsync(topicFor(site.prefix, "gw-a1", "ack"), { qos: 1 });
      const forged = {
        type: "command_progress",
        gateway_id: "gw-a1",
        seq: 7,
        observed_at: new Date().toISOString(),
        command_id: commandId,
        device_id: deviceB,
        state: "SUCCESS",
      };
      await intruder.publishAsync(topicFor(site.prefix, "gw-a1", "up"), JSON.stringify(forged), { qos: 1 });
      await eventually(() => expect(acked).toContain(7)); // processed (and refused), not retried forever
      const cmd = await site.app.inject({
        method: "GET",
        url: `/device/v1/commands/${commandId}`,
        headers: { authorization: `Bearer ${tokenB}` },
      });
      expect(cmd.json().state.value).toBe("SENT");
    });

    if (brokerKind === "embedded aedes") {
      it("refuses connections without valid gateway credentials (S29)", async () => {
        const attempt = (username: string | undefined, password: string | undefined) =>
          new Promise<string>((resolve) => {
            const c = connectMqtt(site.url, {
              clientId: clientIdFor(site, username ?? "anonymous"),
              username,
              password,
              reconnectPeriod: 0,
            });
            c.once("connect", () => {
              resolve("connected");
              c.end(true);
            });
            c.once("error", (err) => {
              resolve(
                (err as { code?: number }).code === 4 || (err as { code?: number }).code === 5
                  ? "refused"
                  : String(err),
              );
              c.end(true);
            });
          });
        expect(await attempt(undefined, undefined)).toBe("refused");
        expect(await attempt("gw-a1", "wrong-password")).toBe("refused");
        expect(await attempt("gw-unknown", SECRET)).toBe("refused");
        expect(await attempt("gw-a1", SECRET)).toBe("connected");
      });

      it("confines a gateway to its own topics (S30)", async () => {
        const gw = await gatewayClient(site, "gw-a1");
        // A refused subscription is a negative SUBACK (0x80), which mqtt.js reports as an error.
        await expect(gw.subscribeAsync(topicFor(site.prefix, "gw-b1", "cmd"), { qos: 1 })).rejects.toThrow(
          /Subscribe error/,
        );
        await expect(gw.subscribeAsync("#", { qos: 1 })).rejects.toThrow(/Subscribe error/);
        await expect(gw.subscribeAsync(topicFor(site.prefix, "gw-a1", "up"), { qos: 1 })).rejects.toThrow(
          /Subscribe error/,
        );
        const own = await gw.subscribeAsync(topicFor(site.prefix, "gw-a1", "cmd"), { qos: 1 });
        expect(own[0]?.qos).toBe(1);
        expect(gw.connected).toBe(true);
      });
    }
  });
}
