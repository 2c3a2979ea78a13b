import pino from "pino";
import { describe, expect, it } from "vitest";
import { startEmbeddedBroker } from "../../cloud/gateway-link/embedded-broker.ts";
import { connectMqtt } from "../../cloud/gateway-link/mqtt-client.ts";
import { applyManifest } from "../../cloud/manifest/apply-manifest.ts";
import { SiteManifest } from "../../cloud/manifest/manifest-schema.ts";
import { ANNOUNCE_ANSWER_MS, MqttBrokerLink } from "../../gateway/adapters/mqtt/broker-mqtt.ts";
import { topicFor } from "../../shared/wire/topics.ts";
import { startHoldProxy } from "../faults/support/hold-proxy.ts";
import { fixtureSecretHash } from "../support/cloud-harness.ts";
import { eventually } from "../support/eventually.ts";
import { FakeClock } from "../support/fake-clock.ts";
import { fixtureManifest, SECRET } from "../support/fixture-site.ts";
import {
  type BrokerSite,
  brokerLinkContract,
  mqttCloudEnd,
  mqttLink,
} from "../support/port-contracts/broker-link.contract.ts";
import { MOSQUITTO_URL } from "../support/site-harness.ts";
import { StandInBrokerLink, StandInWire } from "../support/stand-in-broker-link.ts";
import { openTestDb } from "../support/test-db.ts";

const log = pino({ level: process.env.TEST_LOG_LEVEL ?? "silent" });
const unique = () => Math.random().toString(36).slice(2, 10);

async function connected(url: string, options: Parameters<typeof connectMqtt>[1]) {
  const client = connectMqtt(url, { reconnectPeriod: 0, ...options });
  await new Promise<void>((resolve, reject) => {
    client.once("connect", () => resolve());
    client.once("error", reject);
  });
  return client;
}

// The cloud's embedded broker, with its logins and per-gateway ACL: the fixture's gateway gw-a1.
brokerLinkContract("embedded aedes", async (): Promise<BrokerSite> => {
  const store = await openTestDb();
  await applyManifest(
    store.db,
    SiteManifest.parse(fixtureManifest(await fixtureSecretHash())),
    new FakeClock(),
  );
  const prefix = `c${unique()}`;
  const cloud = { username: "cloud", password: "cloud-test-password" };
  const broker = await startEmbeddedBroker({ db: store.db, log, port: 0, prefix, cloud });
  const url = `mqtt://127.0.0.1:${broker.port}`;
  const client = await connected(url, { clientId: cloud.username, ...cloud });
  const gatewayId = "gw-a1";
  return {
    gatewayId,
    cloud: mqttCloudEnd(client, prefix, gatewayId),
    link: mqttLink({ url, prefix, gatewayId, password: SECRET }),
    async close() {
      await client.endAsync(true);
      await broker.close();
      await store.drop();
    },
  };
});

// The machine's Mosquitto, shared: a topic prefix and a gateway id of the test's own, and nothing left
// behind (the gateway's persistent session and its retained status are cleared).
brokerLinkContract("Mosquitto", async (): Promise<BrokerSite> => {
  const prefix = `c${unique()}`;
  const gatewayId = `gw-contract-${unique()}`;
  const client = await connected(MOSQUITTO_URL, { clientId: `cloud-${prefix}`, clean: true });
  return {
    gatewayId,
    cloud: mqttCloudEnd(client, prefix, gatewayId),
    link: mqttLink({ url: MOSQUITTO_URL, prefix, gatewayId, password: "contract-secret" }),
    async close() {
      await client.publishAsync(topicFor(prefix, gatewayId, "status"), "", { qos: 1, retain: true });
      await client.endAsync(true);
      const session = await connected(MOSQUITTO_URL, { clientId: gatewayId, clean: true });
      await session.endAsync();
    },
  };
});

// The gateway suites' stand-in, which plays broker and cloud in memory: it must keep the same promises.
brokerLinkContract("stand-in (gateway suites)", (): Promise<BrokerSite> => {
  const gatewayId = "gw-stand-in";
  const wire = new StandInWire(gatewayId);
  return Promise.resolve({
    gatewayId,
    cloud: {
      send(channel, payload) {
        wire.send(channel, payload);
        return Promise.resolve();
      },
      listen(channel) {
        const got = wire.heard(channel);
        const from = got.length;
        const since = () => got.slice(from);
        return Promise.resolve({
          get got() {
            return since();
          },
          until: (done: (got: unknown[]) => boolean) => wire.signal.until(() => done(since())),
        });
      },
    },
    link: (clock) => new StandInBrokerLink(clock, gatewayId, { wire, connectOnStart: true, sessions: true }),
    close: () => Promise.resolve(),
  });
});

// Found by the seeded simulation (seed 3, docs/simulation.md): a daemon stopped while its link is a black
// hole (a modem that passes no bytes, not yet noticed by keep-alive) waited forever on its `offline` PUBACK.
describe("the MQTT link stopping over a link that passes no bytes", () => {
  it("gives its offline status a moment, then ends the session by force", async () => {
    const proxy = await startHoldProxy(MOSQUITTO_URL);
    const clock = new FakeClock();
    const gatewayId = `gw-black-hole-${unique()}`;
    const link = new MqttBrokerLink({
      url: proxy.url,
      prefix: `c${unique()}`,
      gatewayId,
      password: "contract-secret",
      clock,
      log,
    });
    const up = new Promise<void>((resolve) => link.once("connected", () => resolve()));
    link.start();
    await up;
    proxy.hold();
    let stopped = false;
    const stopping = link.stop().then(() => {
      stopped = true;
    });
    // The PUBACK cannot come: the stop waits out its grace on the link's clock, and no longer.
    await eventually(() => expect(clock.pendingTimers()).toBeGreaterThan(0));
    expect(stopped).toBe(false);
    clock.advance(2_000);
    await stopping;
    expect(link.connected).toBe(false);
    await proxy.stop();
    const session = await connected(MOSQUITTO_URL, { clientId: gatewayId, clean: true });
    await session.endAsync();
  });
});

// Found by the seeded simulation (docs/simulation.md): reports in flight when the link dropped are sent again
// first on the next connection, one PUBACK at a time, and MQTT.js says "connect" only after them. The
// commands the broker kept arrive meanwhile; the executor judged one on its stale `sent_at` as if the
// session were not new, and moved a latch after the command's deadline.
describe("the MQTT link resuming a session the broker kept", () => {
  it("begins the session before it hands on a command the broker kept, even behind reports sent again", async () => {
    const proxy = await startHoldProxy(MOSQUITTO_URL);
    const clock = new FakeClock();
    const prefix = `c${unique()}`;
    const gatewayId = `gw-resume-${unique()}`;
    const link = new MqttBrokerLink({
      url: proxy.url,
      prefix,
      gatewayId,
      password: "contract-secret",
      clock,
      log,
    });
    const order: string[] = [];
    link.on("session", () => order.push("session"));
    link.on("command", () => order.push("command"));
    const up = new Promise<void>((resolve) => link.once("connected", () => resolve()));
    link.start();
    await up;
    // Reports go into a link that passes no bytes, then the connection resets: they wait for a PUBACK.
    proxy.hold();
    for (let seq = 1; seq <= 3; seq++)
      void link
        .publishUp({
          type: "hardware_event",
          gateway_id: gatewayId,
          seq,
          observed_at: new Date().toISOString(),
          device_id: null,
          source: "bus0/1/1",
          event: "door_opened",
          detail: "",
        })
        .catch(() => undefined);
    proxy.cut();
    await eventually(() => expect(link.connected).toBe(false));
    const cloud = await connected(MOSQUITTO_URL, { clientId: `cloud-${prefix}`, clean: true });
    const command = {
      command_id: "cccccccc-0000-4000-8000-000000000009",
      device_id: "dddddddd-0000-4000-8000-000000000009",
      name: "unlock",
      params: {},
      issued_at: new Date().toISOString(),
      expires_at: "2999-01-01T00:00:00.000Z",
    };
    await cloud.publishAsync(topicFor(prefix, gatewayId, "cmd"), JSON.stringify(command), { qos: 1 });
    proxy.release();
    order.length = 0;
    clock.advance(60_000); // the reconnect waits on the link's clock
    await eventually(() => expect(order).toContain("command"));
    expect(order).toEqual(["session", "command"]);
    await link.stop();
    await cloud.endAsync(true);
    await proxy.stop();
    const session = await connected(MOSQUITTO_URL, { clientId: gatewayId, clean: true });
    await session.endAsync();
  });
});

// Found by the seeded simulation (seed 405212, docs/simulation.md): every message of a gateway was lost for
// a minute, its `online` among them, and the cloud held it offline after the link had healed: its key sync
// skipped it, and nothing it brings on `online` (its map, its waiting commands) was sent.
describe("the MQTT link whose online the cloud does not answer", () => {
  it("says online again, doubling the wait, until the cloud echoes its session's token", async () => {
    const clock = new FakeClock();
    const prefix = `c${unique()}`;
    const gatewayId = `gw-announce-${unique()}`;
    const cloud = await connected(MOSQUITTO_URL, { clientId: `cloud-${prefix}`, clean: true });
    const onlines: string[] = [];
    cloud.on("message", (_t, payload) => {
      const st = JSON.parse(payload.toString()) as { online: boolean; sync: string };
      if (st.online) onlines.push(st.sync);
    });
    await cloud.subscribeAsync(topicFor(prefix, gatewayId, "status"), { qos: 1 });
    const link = new MqttBrokerLink({ url: MOSQUITTO_URL, prefix, gatewayId, password: "x", clock, log });
    link.start();
    await eventually(() => expect(onlines).toHaveLength(1));
    clock.advance(ANNOUNCE_ANSWER_MS - 1);
    await new Promise((r) => setTimeout(r, 50));
    expect(onlines).toHaveLength(1);
    clock.advance(1);
    await eventually(() => expect(onlines).toHaveLength(2));
    clock.advance(2 * ANNOUNCE_ANSWER_MS);
    await eventually(() => expect(onlines).toHaveLength(3));
    expect(new Set(onlines).size).toBe(1); // one session: its token each time
    // The cloud's answer: an ack echoing the token. No more announcing, however long the link stays up.
    const answered = new Promise<void>((resolve) => link.once("cloudTime", () => resolve()));
    const ack = { seqs: [], sync: onlines[0], sent_at: new Date().toISOString() };
    await cloud.publishAsync(topicFor(prefix, gatewayId, "ack"), JSON.stringify(ack), { qos: 1 });
    await answered;
    clock.advance(3_600_000);
    await new Promise((r) => setTimeout(r, 100));
    expect(onlines).toHaveLength(3);
    await link.stop();
    await cloud.unsubscribeAsync(topicFor(prefix, gatewayId, "status"));
    await cloud.publishAsync(topicFor(prefix, gatewayId, "status"), "", { qos: 1, retain: true });
    await cloud.endAsync();
    const session = await connected(MOSQUITTO_URL, { clientId: gatewayId, clean: true });
    await session.endAsync();
  });
});
