import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { FastifyInstance, InjectOptions } from "fastify";
import pino from "pino";
import { buildApp } from "../../cloud/app.ts";
import { createSettledNotifier } from "../../cloud/commands/command-settled.ts";
import { createDeadlineSweeper } from "../../cloud/commands/deadline-sweeper.ts";
import { DEFAULT_COMMAND_TIMEOUTS } from "../../cloud/devices/timeouts.ts";
import { type EmbeddedBroker, startEmbeddedBroker } from "../../cloud/gateway-link/embedded-broker.ts";
import { type GatewayLink, startGatewayLink } from "../../cloud/gateway-link/gateway-link.ts";
import { applyManifest } from "../../cloud/manifest/apply-manifest.ts";
import type { ManifestInput } from "../../cloud/manifest/manifest-schema.ts";
import { SiteManifest } from "../../cloud/manifest/manifest-schema.ts";
import { createConnectionWatch } from "../../cloud/site-events/connection-watch.ts";
import { startWebhookDelivery } from "../../cloud/webhooks/webhook-delivery.ts";
import { MqttBrokerLink } from "../../gateway/adapters/mqtt/broker-mqtt.ts";
import { createSerialLinkFactory } from "../../gateway/adapters/serial/serial-links.ts";
import { type GatewayConfigInput, parseGatewayConfig } from "../../gateway/config.ts";
import { type RunningGateway, startGateway } from "../../gateway/gateway.ts";
import { PtyConnector } from "../../hardware-sim/links.ts";
import { createSimSite, type SimSite } from "../../hardware-sim/site.ts";
import { fixtureSecretHash, ISSUER, TOKEN_SECRET } from "./cloud-harness.ts";
import { eventually } from "./eventually.ts";
import { CLIENTS, fixtureManifest, SECRET } from "./fixture-site.ts";
import { HeartbeatValve } from "./heartbeat-valve.ts";
import { OffsetClock } from "./offset-clock.ts";
import { startPrivateMosquitto } from "./private-mosquitto.ts";
import { openTestDb, type TestDb } from "./test-db.ts";

export const MOSQUITTO_URL = process.env.TEST_MOSQUITTO_URL ?? "mqtt://127.0.0.1:1883";
const CLOUD_MQTT = { username: "cloud", password: "cloud-test-password" };

export type SiteOptions = {
  broker: "aedes" | "mosquitto";
  /** Pseudo-terminals through socat (what a real daemon opens) or in-memory links. */
  serial: "pty" | "memory";
  /** Overrides of the gateway config (merged over the harness defaults). */
  gateway?: Partial<GatewayConfigInput>;
  /** Broker URL to use instead (a private Mosquitto the test controls). */
  brokerUrl?: string;
  /** Where board 1's latches are at power-up; default unlocked (free lockers, as the store has them). */
  latch?: "locked" | "unlocked";
  /** Runs on the simulator before the gateway starts (e.g. to leave a latch somewhere). */
  prepare?: (sim: SimSite) => void;
  /** Changes the fixture manifest before it is applied (another device, a whitelist, a location flag). */
  manifest?: (m: ManifestInput) => void;
  /** Channels of board 1 wired to a door lock (with a door contact) rather than a locker latch. */
  doors?: number[];
  /** More RFID readers: reader id → alias of the device it serves (reader-1 serves locker 1). */
  readers?: Record<string, string>;
  /** Runs the connection watch and webhook delivery as the cloud process does (off: a test that does not
   * look at site events does not pay for their sweeps). */
  siteEvents?: boolean;
  /** The cloud's store: the project's TEST_DB by default; replicas share a PostgreSQL one. */
  store?: "sqlite" | "postgres";
  /** The in-process cloud subscribes as this shared-subscription group (a replica beside others). */
  shareGroup?: string;
  /**
   * The gateway's wall clock this far off the cloud's (a host whose RTC reset, whose NTP never synced):
   * the gateway then runs on a clock of its own, `gatewayClock`. Default: both share one clock.
   */
  gatewayClockOffsetMs?: number;
  /** The cloud's command deadlines, over the defaults (a short delivery deadline keeps a test short). */
  timeouts?: Partial<typeof DEFAULT_COMMAND_TIMEOUTS>;
};

/**
 * One call builds the real system around the fixture site's gateway gw-a1 (STYLE: site-harness): cloud
 * app + gateway link + deadline sweeper, a broker, the hardware simulator (lock bus "bus0" with board 1,
 * reader "reader-1") and the gateway daemon, all sharing one OffsetClock (unless the gateway's is set off).
 */
export async function startSite(o: SiteOptions) {
  const log = pino({ level: process.env.TEST_LOG_LEVEL ?? "silent" });
  const clock = new OffsetClock();
  const gatewayClock = o.gatewayClockOffsetMs === undefined ? clock : new OffsetClock();
  if (o.gatewayClockOffsetMs !== undefined) gatewayClock.jump(o.gatewayClockOffsetMs);
  const store: TestDb = await openTestDb(o.store);
  const manifest = fixtureManifest(await fixtureSecretHash());
  o.manifest?.(manifest);
  await applyManifest(store.db, SiteManifest.parse(manifest), clock);
  const prefix = `e${Math.random().toString(36).slice(2, 10)}`;
  const dir = mkdtempSync(path.join(tmpdir(), "parking-site-"));

  let broker: EmbeddedBroker | null = null;
  // Mosquitto of the site's own: every site's gateway is gw-a1, and on one shared broker parallel test
  // files would take each other's sessions over (a client id is its user's own, MQTT-3.1.4-2).
  const ownMosquitto = o.broker === "mosquitto" && !o.brokerUrl ? await startPrivateMosquitto() : null;
  let brokerUrl = o.brokerUrl ?? ownMosquitto?.url ?? MOSQUITTO_URL;
  if (o.broker === "aedes" && !o.brokerUrl) {
    broker = await startEmbeddedBroker({ db: store.db, log, port: 0, prefix, cloud: CLOUD_MQTT });
    brokerUrl = `mqtt://127.0.0.1:${broker.port}`;
  }
  const timeouts = { ...DEFAULT_COMMAND_TIMEOUTS, ...o.timeouts };
  // The embedded broker admits the cloud under its own client id only (its user name by default); on
  // a shared Mosquitto a client id of the run's own keeps parallel runs apart.
  const cloudClientId = broker ? CLOUD_MQTT.username : `cloud-${prefix}`;
  const heartbeats = new HeartbeatValve();
  // As in the cloud process: what ends a command (gateway report, deadline) wakes a `Prefer: wait`.
  const settled = createSettledNotifier();
  const link: GatewayLink = await startGatewayLink(
    { brokerUrl, ...CLOUD_MQTT, clientId: cloudClientId, prefix, shareGroup: o.shareGroup },
    {
      db: store.db,
      clock,
      log,
      timeouts,
      settled,
      onApplied: (_gw, channel) => channel === "hb" && heartbeats.applied(),
    },
  );
  const app: FastifyInstance = await buildApp({
    db: store.db,
    clock,
    log,
    gateways: link,
    tokenSecret: TOKEN_SECRET,
    issuer: ISSUER,
    timeouts,
    settled,
  });
  const sweeper = createDeadlineSweeper({ db: store.db, clock, timeouts, log, everyMs: 100, settled });
  sweeper.start();
  // Site events: connection changes derived from health, and webhook delivery (to a test's receiver).
  const connections = o.siteEvents ? createConnectionWatch({ db: store.db, clock, log, everyMs: 200 }) : null;
  connections?.start();
  const webhooks = o.siteEvents ? startWebhookDelivery({ db: store.db, clock, log, everyMs: 100 }) : null;

  const sim: SimSite = createSimSite(
    {
      moveMs: 20,
      // The fixture's lockers start free (latch open), as the store has them.
      buses: {
        bus0: { boards: [{ address: 1, channels: 8, latch: o.latch ?? "unlocked", doors: o.doors ?? [] }] },
      },
      readers: Object.fromEntries(
        ["reader-1", ...Object.keys(o.readers ?? {})].map((r) => [r, { aliveMs: false as const }]),
      ),
    },
    o.serial === "pty" ? { connector: (name, baud) => new PtyConnector(dir, name, baud) } : {},
  );
  await sim.ready;
  o.prepare?.(sim);
  const serialPath = (name: string) => (o.serial === "pty" ? path.join(dir, name) : `sim://${name}`);
  const openLink = o.serial === "pty" ? createSerialLinkFactory() : (p: string) => sim.linkFactory(p);

  const gatewayConfig = parseGatewayConfig({
    gateway_id: "gw-a1",
    secret: SECRET,
    broker: { url: brokerUrl, prefix },
    state_dir: path.join(dir, "gw-a1"),
    // A pty through socat on a busy test machine answers slower than a real RS-485 bus: allow it.
    buses: [{ name: "bus0", path: serialPath("bus0"), boards: [1], ack_timeout_ms: 3_000 }],
    readers: Object.entries({ "reader-1": "1", ...o.readers }).map(([id, alias]) => ({
      id,
      path: serialPath(id),
      device_alias: alias,
    })),
    heartbeat_interval_s: 0.2,
    sensor_sweep: null,
    outbox_resend_s: 1,
    log_level: "silent",
    ...o.gateway,
  });
  const bootGateway = () =>
    startGateway({
      config: gatewayConfig,
      secret: SECRET,
      clock: gatewayClock,
      monotonic: gatewayClock,
      log,
      openLink,
      camera: sim.camera,
      brokerLink: (opts) => heartbeats.around(new MqttBrokerLink(opts)),
    });
  let gateway: RunningGateway | null = await bootGateway();
  const running = (): RunningGateway => {
    if (!gateway) throw new Error("the gateway is stopped");
    return gateway;
  };

  const tokens = new Map<string, string>();
  async function call(
    as: string,
    opts: InjectOptions,
    retry = true,
  ): Promise<Awaited<ReturnType<FastifyInstance["inject"]>>> {
    let token = tokens.get(as);
    if (!token) {
      const res = await app.inject({
        method: "POST",
        url: "/oauth2/token",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        payload: `grant_type=client_credentials&client_id=${as}&client_secret=${SECRET}`,
      });
      token = res.json().access_token as string;
      tokens.set(as, token);
    }
    const res = await app.inject({
      ...opts,
      headers: { ...(opts.headers ?? {}), authorization: `Bearer ${token}` },
    });
    // Like a real client: a token that expired while the clock jumped is replaced and the call repeated.
    if (res.statusCode === 401 && retry) {
      tokens.delete(as);
      return call(as, opts, false);
    }
    return res;
  }

  const site = {
    app,
    db: store.db,
    store,
    clock,
    /** The gateway's clock: `clock` itself unless the site was started with the gateway's set off. */
    gatewayClock,
    sim,
    link,
    prefix,
    brokerUrl,
    dir,
    gatewayConfig,
    get gateway(): RunningGateway {
      return running();
    },
    /** Silences the gateway's heartbeats and lets them flow again (a gateway the cloud stops hearing). */
    heartbeats,
    /** The running daemon's status, as `parkctl status` shows it (broker, buses, readers, outbox). */
    status: () => running().control.status(),
    /**
     * Resolves once the gateway has read every device of its map and the cloud has confirmed all it sent:
     * nothing from the start-up is still on its way (a late report would look fresh after a clock jump).
     */
    settled: () =>
      eventually(async () => {
        const unread = (await running().control.devices()).filter((d) => d.bus && !d.read_at);
        const { outbox } = await running().control.status();
        if (unread.length > 0 || outbox.pending > 0)
          throw new Error(
            `not settled: ${unread.length} devices unread, ${outbox.pending} messages unconfirmed`,
          );
      }),
    /** One device as `parkctl devices` shows it (live sensors, last command); undefined if not mapped. */
    gatewayDevice: async (alias: string) =>
      (await running().control.devices()).find((d) => d.alias === alias),
    /** Calls the API as the fixture's admin client of operator A. */
    api: (method: "GET" | "POST", url: string, payload?: object, headers?: Record<string, string>) =>
      call(CLIENTS.admin, { method, url, payload, ...(headers ? { headers } : {}) }),
    /** Stops the embedded broker abruptly (its in-memory sessions are lost, as after a crash). */
    async brokerDown() {
      if (!broker) throw new Error("only the embedded broker is under the harness's control");
      await broker.close();
    },
    /** Starts the embedded broker again on the same port. */
    async brokerUp() {
      if (!broker) throw new Error("only the embedded broker is under the harness's control");
      broker = await startEmbeddedBroker({
        db: store.db,
        log,
        port: Number(new URL(brokerUrl).port),
        prefix,
        cloud: CLOUD_MQTT,
      });
    },
    async stopGateway() {
      await gateway?.stop();
      gateway = null;
    },
    async startGateway() {
      gateway = await bootGateway();
    },
    async stop() {
      sweeper.stop();
      connections?.stop();
      await webhooks?.stop();
      await gateway?.stop();
      await app.close();
      await link.close();
      await broker?.close();
      await ownMosquitto?.stop();
      await sim.close();
      await store.drop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return site;
}

export type Site = Awaited<ReturnType<typeof startSite>>;
