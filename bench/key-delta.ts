/**
 * Whitelist sync through the real cloud (embedded broker, SQLite) to a real gateway daemon (in-memory
 * simulator): a card added with one API call, until the gateway's key cache holds it. The cache starts
 * with CARDS cards (a full snapshot over MQTT, also timed: from the gateway's start to the cache full).
 *   npm run bench:keys            (CARDS=100000, DELTAS=100 by default; BENCH_TIMEOUT_S=300, see time-box.ts)
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import pino from "pino";
import { loadCloudConfig } from "../cloud/config.ts";
import { whitelistChanged } from "../cloud/key-sync/whitelist-changed.ts";
import { applyManifest } from "../cloud/manifest/apply-manifest.ts";
import { SiteManifest } from "../cloud/manifest/manifest-schema.ts";
import { startCloud } from "../cloud/server.ts";
import { MqttBrokerLink } from "../gateway/adapters/mqtt/broker-mqtt.ts";
import { parseGatewayConfig } from "../gateway/config.ts";
import { startGateway } from "../gateway/gateway.ts";
import { createSimSite } from "../hardware-sim/site.ts";
import { systemClock } from "../shared/node/system-clock.ts";
import { printRuntime } from "./runtime.ts";
import { timeBox } from "./time-box.ts";

printRuntime();

const CARDS = Number(process.env.CARDS ?? 100_000);
const DELTAS = Number(process.env.DELTAS ?? 100);
const OPERATOR = "40000000-0000-4000-8000-000000000001";
const WHITELIST = "40000000-0000-4000-8000-0000000000aa";
const SECRET = "bench-keys-secret";
const GW = "gw-bench-keys";

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] as number;
};
const ms = (x: number) => `${x.toFixed(1)} ms`;
const card = (n: number) => `04${n.toString(16).padStart(12, "0")}`;

const box = timeBox("bench:keys");
box.step("starting the cloud");
const dir = mkdtempSync(path.join(tmpdir(), "parking-bench-keys-"));
const log = pino({ level: "silent" });
const cfg = loadCloudConfig({
  DATA_DIR: dir,
  PORT: "0",
  MQTT_PORT: "0",
  HOST: "127.0.0.1",
  LOG_LEVEL: "silent",
});
const manifest = SiteManifest.parse({
  version: 1,
  operators: [
    {
      id: OPERATOR,
      name: "Bench",
      clients: [{ client_id: "bench", secret: SECRET, permissions: ["SUPERADMIN"] }],
      locations: [
        {
          code: "BK",
          label: "Bench house",
          type: "BIKE_HOUSE",
          latitude: 52,
          longitude: 5,
          gateways: [
            {
              id: GW,
              secret: SECRET,
              devices: [{ alias: "north", type: "BIKE_HOUSE_DOOR", bus: { board: 1, channel: 1 } }],
            },
          ],
        },
      ],
      whitelists: [{ id: WHITELIST, name: "Members", targets: [{ location: "BK" }] }],
    },
  ],
});

const tApply = performance.now();
const cloud = await startCloud(cfg, {
  log,
  beforeListen: async (db) => {
    await applyManifest(db, manifest, systemClock);
    // 100,000 cards would take a hundred calls of the API's batch route (1,000 a call): the store is
    // filled directly, then the key view is built once, as a manifest apply builds it.
    const now = new Date().toISOString();
    await db.transaction().execute(async (trx) => {
      for (let i = 0; i < CARDS; i += 500)
        await trx
          .insertInto("whitelist_entities")
          .values(
            Array.from({ length: Math.min(500, CARDS - i) }, (_, j) => ({
              whitelist_id: WHITELIST,
              card_id: card(i + j),
              status: "ACTIVE" as const,
              expires_at: null,
              is_master_key: 0,
              comment: "",
              created_at: now,
              updated_at: now,
            })),
          )
          .execute();
      await whitelistChanged(trx, { whitelistId: WHITELIST, cardIds: "all" }, new Date());
    });
  },
});
const applyMs = performance.now() - tApply;

const sim = createSimSite({
  moveMs: 0,
  buses: { bus0: { boards: [{ address: 1, channels: 1, doors: [1] }] } },
});
let link: MqttBrokerLink | null = null;
box.step(`starting the gateway and waiting for its snapshot of ${CARDS} cards`);
const tStart = performance.now();
const gateway = await startGateway({
  config: parseGatewayConfig({
    gateway_id: GW,
    secret: SECRET,
    broker: { url: cloud.mqttUrl, prefix: cfg.MQTT_PREFIX },
    state_dir: path.join(dir, "gw"),
    buses: [{ name: "bus0", path: "sim://bus0", boards: [1] }],
    sensor_sweep: null,
    key_sweep: null,
    log_level: "silent",
  }),
  secret: SECRET,
  log,
  openLink: (p) => sim.linkFactory(p),
  brokerLink: (o) => {
    link = new MqttBrokerLink(o);
    return link;
  },
  controlSocket: false,
});

try {
  for (;;) {
    if ((await gateway.control.status()).keys.grants === CARDS) break;
    await new Promise((r) => setTimeout(r, 5));
  }
  const snapshotMs = performance.now() - tStart;

  const token = await fetch(`${cloud.baseUrl}/oauth2/token`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: `grant_type=client_credentials&client_id=bench&client_secret=${SECRET}`,
  }).then(async (r) => ((await r.json()) as { access_token: string }).access_token);

  const held = (c: string) => gateway.control.keys(c).then((v) => v.grants.length > 0);
  const deltas: number[] = [];
  const apiOnly: number[] = [];
  box.step(`adding ${DELTAS} cards one by one`);
  for (let i = 0; i < DELTAS; i++) {
    const c = `0f${i.toString(16).padStart(8, "0")}`;
    // The delta is applied in the broker link's `keys` listener the daemon registered first; this one
    // runs right after it, so its time is the moment the cache holds the card.
    const applied = new Promise<number>((resolve) => {
      const onKeys = () => {
        void held(c).then((yes) => {
          if (!yes) return;
          link?.off("keys", onKeys);
          resolve(performance.now());
        });
      };
      link?.on("keys", onKeys);
    });
    const t0 = performance.now();
    const res = await fetch(`${cloud.baseUrl}/whitelist/v1/whitelists/${WHITELIST}/entities`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ operation: "ADD", entities: [{ id: c, id_type: "rfid" }] }),
    });
    const tApi = performance.now();
    if (res.status !== 204) throw new Error(`ADD answered ${res.status}: ${await res.text()}`);
    deltas.push((await applied) - t0);
    apiOnly.push(tApi - t0);
  }

  console.log(
    `Whitelist sync: ${CARDS.toLocaleString("en")} cards, cloud + embedded broker + gateway in one process`,
  );
  console.log(`  cards stored and key view built   ${ms(applyMs)}`);
  console.log(
    `  snapshot: gateway start → ${CARDS.toLocaleString("en")} grants in its cache   ${ms(snapshotMs)}`,
  );
  console.log(`  one-card delta, API call → gateway cache (${DELTAS} runs)`);
  console.log(
    `      p50 ${ms(pct(deltas, 50))}   p99 ${ms(pct(deltas, 99))}   max ${ms(Math.max(...deltas))}`,
  );
  console.log(`      of which the API's 204   p50 ${ms(pct(apiOnly, 50))}   p99 ${ms(pct(apiOnly, 99))}`);
} finally {
  box.step("stopping the gateway and the cloud");
  await gateway.stop();
  await sim.close();
  await cloud.stop();
  rmSync(dir, { recursive: true, force: true });
}
box.finished();
