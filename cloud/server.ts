import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { FastifyInstance } from "fastify";
import { sql } from "kysely";
import pino, { type Logger } from "pino";
import { systemClock } from "../shared/node/system-clock.ts";
import type { Clock } from "../shared/time/clock.ts";
import { buildApp } from "./app.ts";
import { startBackgroundJobs } from "./background-jobs.ts";
import { createSettledNotifier } from "./commands/command-settled.ts";
import type { CloudConfig } from "./config.ts";
import type { DemoHardware } from "./console/demo-hardware.ts";
import { DEFAULT_COMMAND_TIMEOUTS } from "./devices/timeouts.ts";
import { type EmbeddedBroker, startEmbeddedBroker } from "./gateway-link/embedded-broker.ts";
import { type GatewayLink, startGatewayLink } from "./gateway-link/gateway-link.ts";
import { type CloudMetrics, createCloudMetrics, serveCloudMetrics } from "./metrics.ts";
import { type Db, openDb, openPostgresPool, type StoreConfig } from "./store/db.ts";

export type RunningCloud = {
  app: FastifyInstance;
  db: Db;
  link: GatewayLink;
  broker: EmbeddedBroker | null;
  metrics: CloudMetrics;
  baseUrl: string;
  mqttUrl: string;
  stop(): Promise<void>;
};

/** A secret kept in the data directory so tokens survive restarts of a single-node install. */
function persistentSecret(dataDir: string, name: string, bytes: number): string {
  const file = path.join(dataDir, name);
  if (existsSync(file)) return readFileSync(file, "utf8").trim();
  const secret = randomBytes(bytes).toString("base64url");
  writeFileSync(file, `${secret}\n`, { mode: 0o600 });
  return secret;
}

/**
 * The store (SQLite in DATA_DIR unless DATABASE_URL names PostgreSQL) and, on PostgreSQL, the pools of its
 * own that what gateways send writes through, so an HTTP request never queues behind a fleet's reports.
 */
async function openCloudStores(
  cfg: CloudConfig,
): Promise<{ db: Db; gatewayDb: Db; heartbeatDb: Db; commandDb: Db }> {
  const store: StoreConfig = cfg.DATABASE_URL
    ? { kind: "postgres", url: cfg.DATABASE_URL }
    : { kind: "sqlite", file: path.join(cfg.DATA_DIR, "cloud.db") };
  const db = await openDb(store, { poolMax: cfg.DATABASE_POOL_MAX });
  if (store.kind !== "postgres") return { db, gatewayDb: db, heartbeatDb: db, commandDb: db };
  return {
    db,
    gatewayDb: await openPostgresPool(store, cfg.DATABASE_GATEWAY_POOL_MAX),
    // Command outcomes a request may be waiting on: a lane of their own, never behind a fleet's start.
    commandDb: await openPostgresPool(store, 2),
    // Heartbeats are written a batch at a time on one connection that does not wait for the WAL flush.
    heartbeatDb: await openPostgresPool(store, 1, { durable: false }),
  };
}

/**
 * Composition root of the cloud process: store, broker (embedded unless MQTT_URL is set), gateway
 * link, deadline sweeper and HTTP app, started in that order and stopped in reverse.
 */
export async function startCloud(
  cfg: CloudConfig,
  opts: {
    clock?: Clock;
    log?: Logger;
    beforeListen?: (db: Db) => Promise<void>;
    /** The demo's simulated hardware, for the console's demo panel (`npm start` only). */
    demoHardware?: DemoHardware;
  } = {},
): Promise<RunningCloud> {
  const clock = opts.clock ?? systemClock;
  const log = opts.log ?? pino({ level: cfg.LOG_LEVEL });
  mkdirSync(cfg.DATA_DIR, { recursive: true, mode: 0o700 }); // holds the store and secrets: owner only
  const { db, gatewayDb, heartbeatDb, commandDb } = await openCloudStores(cfg);
  if (opts.beforeListen) await opts.beforeListen(db);

  const metrics = createCloudMetrics();
  const mqttPassword = cfg.MQTT_PASSWORD ?? persistentSecret(cfg.DATA_DIR, "mqtt-cloud-secret", 24);
  const mqttClientId = cfg.MQTT_CLIENT_ID ?? cfg.MQTT_USERNAME;
  let broker: EmbeddedBroker | null = null;
  let mqttUrl = cfg.MQTT_URL;
  if (!mqttUrl) {
    broker = await startEmbeddedBroker({
      db,
      log,
      port: cfg.MQTT_PORT,
      host: cfg.HOST,
      prefix: cfg.MQTT_PREFIX,
      cloud: { username: cfg.MQTT_USERNAME, password: mqttPassword, clientId: mqttClientId },
      clock,
      metrics,
    });
    mqttUrl = `mqtt://${cfg.HOST}:${broker.port}`;
  }
  const timeouts = DEFAULT_COMMAND_TIMEOUTS;
  // Commands ended in this process wake the requests here that wait on them (`Prefer: wait`).
  const settled = createSettledNotifier();
  const link = await startGatewayLink(
    {
      brokerUrl: mqttUrl,
      username: cfg.MQTT_USERNAME,
      password: mqttPassword,
      clientId: mqttClientId,
      prefix: cfg.MQTT_PREFIX,
      // aedes has no shared subscriptions; the embedded broker serves one process anyway.
      shareGroup: broker || !cfg.MQTT_SHARE_GROUP ? undefined : cfg.MQTT_SHARE_GROUP,
    },
    { db: gatewayDb, heartbeatDb, commandDb, clock, log, timeouts, settled, metrics },
  );
  const jobs = startBackgroundJobs({ db, clock, log, timeouts, settled });

  const tokenSecret = cfg.TOKEN_SECRET ?? persistentSecret(cfg.DATA_DIR, "token-secret", 48);
  const app = await buildApp({
    db,
    clock,
    log,
    gateways: link,
    tokenSecret: new TextEncoder().encode(tokenSecret),
    issuer: cfg.AUTH_URL ?? cfg.BASE_URL ?? `http://${cfg.HOST}:${cfg.PORT}`,
    timeouts,
    settled,
    console: {
      baseUrl: cfg.BASE_URL,
      idleTimeoutMs: cfg.CONSOLE_IDLE_MINUTES * 60_000,
      demoHardware: opts.demoHardware,
      mapTiles: cfg.CONSOLE_MAP_TILES,
    },
    isReady: async () => {
      await sql`select 1`.execute(db);
      return link.client.connected;
    },
  });
  await app.listen({ host: cfg.HOST, port: cfg.PORT });
  const metricsServer =
    cfg.METRICS_PORT === undefined ? null : await serveCloudMetrics(metrics, cfg.HOST, cfg.METRICS_PORT);
  const address = app.server.address();
  const port = typeof address === "object" && address ? address.port : cfg.PORT;
  const baseUrl = cfg.BASE_URL ?? `http://${cfg.HOST}:${port}`;

  return {
    app,
    db,
    link,
    broker,
    metrics,
    baseUrl,
    mqttUrl,
    async stop() {
      await new Promise<void>((r) => (metricsServer ? metricsServer.close(() => r()) : r()));
      await app.close();
      await jobs.stop();
      await link.close();
      await broker?.close();
      for (const pool of new Set([db, gatewayDb, heartbeatDb, commandDb])) await pool.destroy();
    },
  };
}
