import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { FastifyInstance } from "fastify";
import { sql } from "kysely";
import type { IClientOptions, MqttClient } from "mqtt";
import pino from "pino";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { buildApp } from "../../cloud/app.ts";
import { DEFAULT_COMMAND_TIMEOUTS } from "../../cloud/devices/timeouts.ts";
import { type EmbeddedBroker, startEmbeddedBroker } from "../../cloud/gateway-link/embedded-broker.ts";
import { type GatewayLink, startGatewayLink } from "../../cloud/gateway-link/gateway-link.ts";
import { connectMqtt } from "../../cloud/gateway-link/mqtt-client.ts";
import { applyManifest } from "../../cloud/manifest/apply-manifest.ts";
import { type ManifestInput, SiteManifest } from "../../cloud/manifest/manifest-schema.ts";
import { buildMosquittoExport, writeMosquittoExport } from "../../cloud/manifest/mosquitto-export.ts";
import { type CloudMetrics, counterValue, createCloudMetrics } from "../../cloud/metrics.ts";
import { DOWN_CHANNELS } from "../../shared/wire/topics.ts";
import { fixtureSecretHash, ISSUER, TOKEN_SECRET } from "../support/cloud-harness.ts";
import { eventually } from "../support/eventually.ts";
import { FakeClock } from "../support/fake-clock.ts";
import { CLIENTS, fixtureManifest, fx, SECRET } from "../support/fixture-site.ts";
import {
  ACTING_GATEWAY,
  type AuthorizationRow,
  type BrokerKind,
  type Fixtures,
  GATEWAY_AUTHORIZATION,
  type PublishRow,
  type ReportRow,
  type SubscribeRow,
  type Topics,
  topicsUnder,
} from "../support/gateway-authorization.ts";
import { freePort, runMosquitto } from "../support/private-mosquitto.ts";
import { openTestDb, type TestDb } from "../support/test-db.ts";

const log = pino({ level: process.env.TEST_LOG_LEVEL ?? "silent" });
const CLOUD = { username: "cloud", password: "cloud-authz-password" };
const A = ACTING_GATEWAY;
const B = "gw-b1";

type Received = { topic: string; payload: string; qos: number };

/**
 * The fixture site, gw-b1 with a camera (a take-photo of operator B to forge parts for); with
 * `plainSecrets`, each gateway's secret in the clear, as a Mosquitto export needs.
 */
async function siteManifest(plainSecrets = false): Promise<ManifestInput> {
  const m = fixtureManifest(await fixtureSecretHash());
  for (const op of m.operators)
    for (const loc of op.locations ?? [])
      for (const gw of loc.gateways ?? []) {
        if (plainSecrets) {
          delete gw.secret_hash;
          gw.secret = SECRET;
        }
        if (gw.id === B) gw.camera = true;
      }
  return m;
}

/** The broker under test, with the cloud's link and app in front of one store. */
type Site = {
  url: string;
  topics: Topics;
  store: TestDb;
  link: GatewayLink;
  app: FastifyInstance;
  metrics: CloudMetrics;
  cloudInbox: Received[];
  fixtures: Fixtures;
  stop(): Promise<void>;
};

async function startBroker(kind: BrokerKind, store: TestDb, metrics: CloudMetrics) {
  if (kind === "embedded aedes") {
    const prefix = `z${Math.random().toString(36).slice(2, 10)}`;
    const broker: EmbeddedBroker = await startEmbeddedBroker({
      db: store.db,
      log,
      port: 0,
      prefix,
      cloud: CLOUD,
      metrics,
    });
    return { url: `mqtt://127.0.0.1:${broker.port}`, prefix, stop: () => broker.close() };
  }
  // Mosquitto with exactly what `npm run manifest -- mosquitto` writes for this site.
  const dir = mkdtempSync(path.join(tmpdir(), "parking-authz-"));
  const port = await freePort();
  const prefix = "authz";
  const exp = buildMosquittoExport(
    SiteManifest.parse(await siteManifest(true)),
    { MQTT_PASSWORD: CLOUD.password },
    {
      dir,
      prefix,
      listener: { host: "127.0.0.1", port },
      // Started as root, Mosquitto switches to the 'mosquitto' user, which cannot read this temp dir.
      user: process.getuid?.() === 0 ? "root" : undefined,
    },
  );
  writeMosquittoExport(dir, exp);
  const broker = await runMosquitto(path.join(dir, "mosquitto.conf"));
  return {
    url: `mqtt://127.0.0.1:${port}`,
    prefix,
    async stop() {
      await broker.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function startSite(kind: BrokerKind): Promise<Site> {
  const store = await openTestDb("sqlite");
  await applyManifest(store.db, SiteManifest.parse(await siteManifest()), new FakeClock());
  const metrics = createCloudMetrics();
  const broker = await startBroker(kind, store, metrics);
  const clock = new FakeClock();
  const link = await startGatewayLink(
    { brokerUrl: broker.url, ...CLOUD, clientId: CLOUD.username, prefix: broker.prefix },
    { db: store.db, clock, log, timeouts: DEFAULT_COMMAND_TIMEOUTS, metrics },
  );
  const cloudInbox: Received[] = [];
  link.client.on("message", (topic, payload, packet) =>
    cloudInbox.push({ topic, payload: payload.toString(), qos: packet.qos }),
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
  const token = (
    await app.inject({
      method: "POST",
      url: "/oauth2/token",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      payload: `grant_type=client_credentials&client_id=${CLIENTS.other}&client_secret=${SECRET}`,
    })
  ).json().access_token as string;
  const command = async (command: string, device: string) => {
    const res = await app.inject({
      method: "POST",
      url: `/device/v1/devices/${device}/commands`,
      payload: { command },
      headers: { authorization: `Bearer ${token}` },
    });
    if (res.statusCode !== 200) throw new Error(`${command}: ${res.statusCode} ${res.body}`);
    return res.json().id as string;
  };
  const fixtures = {
    bLockCommand: await command("lock", fx.device("B1", "1")),
    // The camera is the gateway's own, its GUARD device.
    bPhotoCommand: await command("take-photo", fx.guard(B)),
  };
  return {
    url: broker.url,
    topics: topicsUnder(broker.prefix),
    store,
    link,
    app,
    metrics,
    cloudInbox,
    fixtures,
    async stop() {
      await app.close();
      await link.close();
      await broker.stop();
      await store.drop();
    },
  };
}

/** Every table of the store but the bookkeeping of applied seqs, as rows of JSON. */
async function dump(db: TestDb["db"]): Promise<Record<string, string[]>> {
  const tables = await sql<{ name: string }>`
    SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'
      AND name NOT IN ('applied_seqs', 'kysely_migration', 'kysely_migration_lock')`.execute(db);
  const out: Record<string, string[]> = {};
  for (const { name } of tables.rows)
    out[name] = (await sql<object>`SELECT * FROM ${sql.table(name)}`.execute(db)).rows.map((r) =>
      JSON.stringify(r),
    );
  return out;
}

/** The tables whose rows changed, with the rows added to each. */
function changes(before: Record<string, string[]>, after: Record<string, string[]>) {
  const changed: Record<string, Record<string, unknown>[]> = {};
  for (const [table, rows] of Object.entries(after)) {
    const old = new Set(before[table] ?? []);
    const kept = new Set(rows);
    const added = rows.filter((r) => !old.has(r));
    const gone = (before[table] ?? []).filter((r) => !kept.has(r));
    if (added.length || gone.length)
      changed[table] = added.map((r) => JSON.parse(r) as Record<string, unknown>);
  }
  return changed;
}

for (const kind of ["embedded aedes", "mosquitto"] as const) {
  describe(`what a gateway's credentials may do over ${kind} (gateway-authorization.ts)`, () => {
    let site: Site;
    const clients: MqttClient[] = [];
    let n = 0;

    beforeAll(async () => {
      site = await startSite(kind);
    });
    afterAll(async () => {
      await site?.stop();
    });
    beforeEach(() => {
      n++;
    });
    afterEach(async () => {
      await Promise.all(clients.splice(0).map((c) => c.endAsync(true)));
    });

    /** Gateway `id` with its own credentials and a clean session; what reaches it is kept in `inbox`. */
    async function gateway(id: string, subscribe: string[] = []) {
      const opts: IClientOptions = { clientId: id, username: id, password: SECRET, reconnectPeriod: 0 };
      const c = connectMqtt(site.url, opts);
      clients.push(c);
      const inbox: Received[] = [];
      c.on("message", (topic, payload, packet) =>
        inbox.push({ topic, payload: payload.toString(), qos: packet.qos }),
      );
      await new Promise<void>((resolve, reject) => {
        c.once("connect", () => resolve());
        c.once("error", reject);
      });
      if (subscribe.length) await c.subscribeAsync(subscribe, { qos: 1 });
      return { client: c, inbox };
    }
    const ownDown = (id: string) => DOWN_CHANNELS.map((ch) => site.topics.of(id, ch));

    /** Waits until `inbox` holds `payload`. */
    const arrives = (inbox: Received[], payload: string) =>
      eventually(() => expect(inbox.map((m) => m.payload)).toContain(payload));

    async function publishRow(row: PublishRow) {
      const marker = `marker-${n}`;
      const topic = row.topic(site.topics);
      const a = await gateway(A, ownDown(A));
      const b = await gateway(B, ownDown(B));
      const closed = new Promise<boolean>((r) => a.client.once("close", () => r(true)));
      a.client.publish(topic, marker, { qos: row.qos }, () => {});
      // Flush every reader: a publish on A's own hb, after it on the same connection (or a new one when
      // the broker closed it), reaches the cloud after it would have; the cloud's on A's and B's cmd
      // reach them after anything routed before.
      const closes = row.closes?.[kind] ?? false;
      if (closes) expect(await closed).toBe(true);
      const sender = a.client.connected ? a : await gateway(A, ownDown(A));
      await sender.client.publishAsync(site.topics.of(A, "hb"), `"flush-${n}"`, { qos: 1 });
      await arrives(site.cloudInbox, `"flush-${n}"`);
      for (const [id, party] of [
        [A, sender],
        [B, b],
      ] as const) {
        await site.link.client.publishAsync(site.topics.of(id, "cmd"), `flush-${n}`, { qos: 1 });
        await arrives(party.inbox, `flush-${n}`);
      }
      const seen = [...site.cloudInbox, ...a.inbox, ...sender.inbox, ...b.inbox].filter(
        (m) => m.payload === marker,
      );
      if (row.expected === "delivered") {
        expect(seen).toEqual([{ topic, payload: marker, qos: row.qos }]);
      } else {
        expect(seen).toEqual([]);
        if (!closes) expect(a.client.connected).toBe(true);
      }
    }

    async function subscribeRow(row: SubscribeRow) {
      const marker = `marker-${n}`;
      const a = await gateway(A);
      const probe = row.probe?.(site.topics);
      const filter = row.filter(site.topics);
      const suback = await a.client.subscribeAsync(filter, { qos: row.qos ?? 1 }).then(
        (granted) => granted[0]?.qos ?? -1,
        (err: { code?: number }) => {
          if (err.code === 0x80 || /Subscribe error/.test(String(err))) return "refused" as const;
          throw err;
        },
      );
      expect(suback).toBe(row.suback[kind]);
      // A flush subscription of A's own, on a channel the probe is not on.
      const flush = site.topics.of(A, probe === site.topics.of(A, "ack") ? "cmd" : "ack");
      await a.client.subscribeAsync(flush, { qos: 1 });
      if (probe) await site.link.client.publishAsync(probe, marker, { qos: 1 });
      await site.link.client.publishAsync(flush, `flush-${n}`, { qos: 1 });
      await arrives(a.inbox, `flush-${n}`);
      const own = new Set(ownDown(A));
      if (row.expected === "delivered") {
        const got = a.inbox.filter((m) => m.payload === marker);
        expect(got.map((m) => m.topic)).toEqual([probe]);
        for (const m of got) expect(m.qos).toBeLessThanOrEqual(1);
      } else {
        // Nothing it may not read arrives: no probe, no other gateway's retained map, no $SYS.
        expect(a.inbox.filter((m) => m.payload === marker || !own.has(m.topic))).toEqual([]);
        expect(a.client.connected).toBe(true);
      }
    }

    async function reportRow(row: ReportRow) {
      const seq = 10_000 + n;
      const a = await gateway(A, [site.topics.of(A, "ack")]);
      const counted = row.counted ?? { type: "up", reason: "invalid" };
      const countedBefore = await counterValue(site.metrics.gatewayRefused, counted);
      const allBefore = await counterValue(site.metrics.gatewayRefused);
      const before = await dump(site.store.db);
      await a.client.publishAsync(site.topics.of(A, "up"), JSON.stringify(row.message(seq, site.fixtures)), {
        qos: 1,
      });
      // The cloud acknowledges every report it has dealt with, refused or not (else it would come again).
      await eventually(() =>
        expect(a.inbox.flatMap((m) => (JSON.parse(m.payload) as { seqs: number[] }).seqs)).toContain(seq),
      );
      const changed = changes(before, await dump(site.store.db));
      const countedNow = (await counterValue(site.metrics.gatewayRefused, counted)) - countedBefore;
      const allNow = (await counterValue(site.metrics.gatewayRefused)) - allBefore;
      switch (row.expected) {
        case "delivered":
          expect(allNow).toBe(0);
          for (const t of row.tables ?? []) expect(Object.keys(changed)).toContain(t);
          break;
        case "dropped and counted":
          expect(countedNow).toBe(1);
          expect(allNow).toBe(1);
          expect(changed).toEqual({});
          break;
        case "kept without the device": {
          expect(countedNow).toBe(1);
          expect(allNow).toBe(1);
          const [table] = row.tables ?? [];
          expect(Object.keys(changed)).toEqual([table]);
          expect(changed[table ?? ""]).toEqual([
            expect.objectContaining({ gateway_id: A, seq, device_id: null }),
          ]);
          break;
        }
        default:
          throw new Error(`a report is not ${row.expected}`);
      }
    }

    const run = (row: AuthorizationRow) =>
      row.act === "publish" ? publishRow(row) : row.act === "subscribe" ? subscribeRow(row) : reportRow(row);

    for (const row of GATEWAY_AUTHORIZATION) it(`${row.case}: ${row.expected}`, () => run(row));
  });
}
