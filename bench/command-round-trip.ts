/**
 * Command round trip: POST lock/unlock → SUCCESS seen by a polling client, over 20 devices whose simulated
 * hardware answers at once; beside the floor measured in the same run on the same broker (one bare HTTP
 * round trip + two MQTT QoS 1 round trips, gateway → cloud → gateway) and the durable floor, which adds the
 * four durable commits a command cannot do without (the cloud accepting it, the gateway journalling it
 * before the hardware moves, the gateway's outcome, the cloud applying it), each measured as a SQLite
 * commit with synchronous=FULL in the bench's own directory; and the gateway daemon's resident memory idle
 * and under that load. The gateway runs as its own process on pseudo-terminal serial.
 *   npm run bench:commands            (COMMANDS=400 by default; BENCH_TIMEOUT_S=300, see time-box.ts)
 */
import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import Fastify from "fastify";
import pino from "pino";
import { hashSecret } from "../cloud/auth/secrets.ts";
import { createSettledNotifier } from "../cloud/commands/command-settled.ts";
import { createDeadlineSweeper } from "../cloud/commands/deadline-sweeper.ts";
import { DEFAULT_COMMAND_TIMEOUTS } from "../cloud/devices/timeouts.ts";
import { startEmbeddedBroker } from "../cloud/gateway-link/embedded-broker.ts";
import { startGatewayLink } from "../cloud/gateway-link/gateway-link.ts";
import { connectMqtt } from "../cloud/gateway-link/mqtt-client.ts";
import { derivedId } from "../cloud/manifest/apply-manifest.ts";
import { PtyConnector } from "../hardware-sim/links.ts";
import { createSimSite } from "../hardware-sim/site.ts";
import { systemClock } from "../shared/node/system-clock.ts";
import { topicFor } from "../shared/wire/topics.ts";
import { printRuntime } from "./runtime.ts";
import { benchDb, clientToken, declareOperator, listen, lockers, startCloud } from "./support.ts";
import { timeBox } from "./time-box.ts";

printRuntime();

const COMMANDS = Number(process.env.COMMANDS ?? 400);
const DEVICES = 20;
const OP = "dddddddd-0000-4000-8000-000000000004";
const SECRET = "bench-secret-123";
const log = pino({ level: "silent" });

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] as number;
};
const fmt = (xs: number[]) => `p50 ${pct(xs, 50).toFixed(2)} ms   p99 ${pct(xs, 99).toFixed(2)} ms`;
const rssMb = (pid: number) => {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return m ? Number(m[1]) / 1024 : Number.NaN;
};

const box = timeBox("bench:commands");

// Cloud: SQLite, embedded broker, real gateway link; no throttle so one device can be driven back to back.
box.step("starting the cloud");
const { dir, db } = await benchDb("parking-bench-cmd-");
const hash = await hashSecret(SECRET);
await declareOperator(db, {
  id: OP,
  name: "Bench",
  clients: [{ client_id: "bench", secret_hash: hash, permissions: [] }],
  locations: [
    {
      code: "BENCH",
      label: "Bench lockers",
      type: "BIKE_LOCKERS",
      latitude: 52,
      longitude: 4,
      gateways: [
        {
          id: "gw-bench",
          secret_hash: hash,
          devices: lockers(DEVICES).map((d, i) => ({ ...d, bus: { board: 1, channel: i + 1 } })),
        },
        // The far end of the MQTT floor (the broker admits each user under its own client id only).
        { id: "gw-floor", secret_hash: hash },
      ],
    },
  ],
});
const cloudMqtt = { username: "cloud", password: "bench-cloud-password" };
const broker = await startEmbeddedBroker({ db, log, port: 0, prefix: "bench", cloud: cloudMqtt });
const brokerUrl = `mqtt://127.0.0.1:${broker.port}`;
const timeouts = { ...DEFAULT_COMMAND_TIMEOUTS, throttleMs: 0, throttlePowerSaveMs: 0 };
// One notifier for the process, as cloud/server.ts wires it: a `Prefer: wait` hears the link's endings at once.
const settled = createSettledNotifier();
const link = await startGatewayLink(
  { brokerUrl, ...cloudMqtt, clientId: cloudMqtt.username, prefix: "bench" },
  { db, clock: systemClock, log, timeouts, settled },
);
const { app, port } = await startCloud(db, { log, gateways: link, timeouts, settled });
const base = `http://127.0.0.1:${port}`;
const sweeper = createDeadlineSweeper({ db, clock: systemClock, timeouts, log, settled });
sweeper.start();

// Hardware: one board with 20 channels, answering at once, behind a pseudo-terminal.
box.step("starting the simulated hardware (socat)");
const sim = createSimSite(
  { moveMs: 0, buses: { bus0: { boards: [{ address: 1, channels: DEVICES, latch: "unlocked" }] } } },
  { connector: (n, b) => new PtyConnector(dir, n, b) },
);
await sim.ready;

// The gateway daemon as a process of its own.
const configFile = path.join(dir, "gateway.json");
writeFileSync(
  configFile,
  JSON.stringify({
    gateway_id: "gw-bench",
    secret: SECRET,
    broker: { url: brokerUrl, prefix: "bench" },
    state_dir: path.join(dir, "gw"),
    // A loaded machine may stall a process for longer than a board's 250 ms: that is no board failing.
    buses: [{ name: "bus0", path: path.join(dir, "bus0"), boards: [1], ack_timeout_ms: 2_000 }],
    log_level: "warn",
  }),
);
const gateway: ChildProcess = spawn(
  process.execPath,
  ["--import", "tsx", "gateway/main.ts", "--config", configFile],
  { stdio: ["ignore", "ignore", "inherit"] },
);
const pid = gateway.pid as number;
box.own(gateway);
const gatewayExited = new Promise<void>((r) => gateway.once("exit", () => r()));

const auth = {
  authorization: `Bearer ${await clientToken(app, SECRET)}`,
  "content-type": "application/json",
};
const device = (i: number) => derivedId(derivedId(OP, "location", "BENCH"), "device", String(i + 1));

async function roundTrip(i: number, name: "lock" | "unlock"): Promise<number> {
  const t0 = performance.now();
  const post = await fetch(`${base}/device/v1/devices/${device(i)}/commands`, {
    method: "POST",
    headers: auth,
    body: JSON.stringify({ command: name }),
  });
  const { id } = (await post.json()) as { id: string };
  for (;;) {
    const c = (await (await fetch(`${base}/device/v1/commands/${id}`, { headers: auth })).json()) as {
      state: { value: string; reason: string };
    };
    if (c.state.value === "SUCCESS") return performance.now() - t0;
    if (c.state.value === "ERROR") throw new Error(`command ${id} failed: ${c.state.reason}`);
  }
}

/** Where a command's time went, from its events' timestamps (the cloud's clock, this process's). */
const stages = new Map<string, number[]>();
function noteStages(events: { name: string; timestamp: string }[], answeredAt: number) {
  const add = (k: string, ms: number) => stages.set(k, [...(stages.get(k) ?? []), ms]);
  events.forEach((e, k) => {
    const prev = events[k - 1];
    if (prev) add(`${prev.name} → ${e.name}`, Date.parse(e.timestamp) - Date.parse(prev.timestamp));
  });
  const last = events.at(-1);
  if (last) add(`${last.name} → answer sent`, answeredAt - Date.parse(last.timestamp));
}

/** POST with `Prefer: wait=10`: the one answer is the ended command. */
async function waitedTrip(i: number, name: "lock" | "unlock"): Promise<number> {
  const t0 = performance.now();
  const post = await fetch(`${base}/device/v1/devices/${device(i)}/commands`, {
    method: "POST",
    headers: { ...auth, prefer: "wait=10" },
    body: JSON.stringify({ command: name }),
  });
  const answeredAt = Date.now();
  const c = (await post.json()) as {
    id: string;
    state: { value: string; reason: string };
    events: { name: string; timestamp: string }[];
  };
  if (c.state.value !== "SUCCESS")
    throw new Error(`command ${c.id} ended ${c.state.value}: ${c.state.reason}`);
  noteStages(c.events, answeredAt);
  return performance.now() - t0;
}

/**
 * One durable commit, `n` times: a ~200-byte row inserted in its own transaction in a SQLite store in the
 * bench's directory, WAL with synchronous=FULL (as the gateway's store; the cloud's SQLite commits with
 * NORMAL, PostgreSQL with a WAL flush: four of these is the fair price of a command that survives a crash).
 */
function durableCommits(n: number): number[] {
  const file = path.join(dir, "commit-floor.db");
  const store = new Database(file);
  store.pragma("journal_mode = WAL");
  store.pragma("synchronous = FULL");
  store.exec("CREATE TABLE rows (id INTEGER PRIMARY KEY, body TEXT NOT NULL)");
  const insert = store.prepare("INSERT INTO rows (body) VALUES (?)");
  const body = "x".repeat(200);
  const took: number[] = [];
  for (let k = 0; k < n; k++) {
    const t0 = performance.now();
    insert.run(body); // autocommit: one transaction, one fsync of the WAL
    took.push(performance.now() - t0);
  }
  store.close();
  return took;
}

/** What the spec suggests without it: POST, then GET every second until the command has ended. */
async function politeTrip(i: number, name: "lock" | "unlock"): Promise<number> {
  const t0 = performance.now();
  const post = await fetch(`${base}/device/v1/devices/${device(i)}/commands`, {
    method: "POST",
    headers: auth,
    body: JSON.stringify({ command: name }),
  });
  let c = (await post.json()) as { id: string; state: { value: string; reason: string } };
  while (c.state.value !== "SUCCESS" && c.state.value !== "ERROR") {
    await new Promise((r) => setTimeout(r, 1_000));
    c = (await (await fetch(`${base}/device/v1/commands/${c.id}`, { headers: auth })).json()) as typeof c;
  }
  if (c.state.value === "ERROR") throw new Error(`command ${c.id} failed: ${c.state.reason}`);
  return performance.now() - t0;
}

try {
  // Ready once a lock goes through end to end.
  box.step("waiting for the gateway daemon's first lock");
  for (let tries = 0; ; tries++) {
    try {
      await roundTrip(0, "lock");
      await roundTrip(0, "unlock");
      break;
    } catch (err) {
      if (tries > 50) throw err;
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  await new Promise((r) => setTimeout(r, 2_000));
  const idleRss = rssMb(pid);

  const locked = new Set<number>();
  const trips: number[] = [];
  let peakRss = idleRss;
  box.step(`sending ${COMMANDS} commands`);
  for (let n = 0; n < COMMANDS; n++) {
    const i = n % DEVICES;
    const name = locked.has(i) ? "unlock" : "lock";
    trips.push(await roundTrip(i, name));
    if (name === "lock") locked.add(i);
    else locked.delete(i);
    if (n % 20 === 0) peakRss = Math.max(peakRss, rssMb(pid));
  }

  // Without polling (Prefer: wait) against polling at the spec's 1 s cadence: what a rider waits.
  box.step("comparing Prefer: wait with polling every second");
  const WAITED = Number(process.env.WAITED ?? 100);
  const waited: number[] = [];
  const polite: number[] = [];
  for (let n = 0; n < WAITED; n++) {
    const i = n % DEVICES;
    const name = locked.has(i) ? "unlock" : "lock";
    waited.push(await waitedTrip(i, name));
    // Polling at the spec's cadence costs a second a command: a few show it.
    if (n < 10) polite.push(await politeTrip(i, name === "lock" ? "unlock" : "lock"));
    else waited.push(await waitedTrip(i, name === "lock" ? "unlock" : "lock"));
  }

  // The floor, on the same machine and broker: a bare HTTP round trip, and MQTT publish → receive → echo.
  box.step("measuring the floor");
  const bare = Fastify();
  bare.get("/", () => ({ ok: true }));
  const bareUrl = `http://127.0.0.1:${await listen(bare)}/`;
  const http: number[] = [];
  for (let n = 0; n < COMMANDS; n++) {
    const t0 = performance.now();
    await (await fetch(bareUrl)).json();
    http.push(performance.now() - t0);
  }
  await bare.close();
  // A gateway publishes on its up channel; the cloud's own session echoes it onto the gateway's cmd.
  const up = topicFor("bench", "gw-floor", "up");
  const cmd = topicFor("bench", "gw-floor", "cmd");
  const a = connectMqtt(brokerUrl, { clientId: "gw-floor", username: "gw-floor", password: SECRET });
  await new Promise<void>((r) => a.once("connect", () => r()));
  await a.subscribeAsync(cmd, { qos: 1 });
  const echo = (topic: string, m: Buffer) => {
    if (topic === up) void link.client.publishAsync(cmd, m, { qos: 1 });
  };
  link.client.on("message", echo);
  const mqtt: number[] = [];
  for (let n = 0; n < COMMANDS; n++) {
    const t0 = performance.now();
    await new Promise<void>((resolve) => {
      a.once("message", () => resolve());
      void a.publishAsync(up, String(n), { qos: 1 });
    });
    mqtt.push(performance.now() - t0);
  }
  link.client.off("message", echo);
  await a.endAsync();
  const floor = http.map((h, k) => h + (mqtt[k] ?? 0) + (mqtt[(k + 1) % mqtt.length] ?? 0));
  const commits = durableCommits(COMMANDS);
  const at = (xs: number[], k: number) => xs[k % xs.length] ?? 0;
  const durable = floor.map(
    (f, k) => f + at(commits, k) + at(commits, k + 1) + at(commits, k + 2) + at(commits, k + 3),
  );

  console.log(
    `Command round trip (POST → SUCCESS seen by a polling client), ${COMMANDS} commands over ${DEVICES} devices`,
  );
  console.log(`  service                   ${fmt(trips)}`);
  console.log(`  floor (HTTP + 2 × MQTT)   ${fmt(floor)}`);
  console.log(`    bare HTTP round trip    ${fmt(http)}`);
  console.log(`    MQTT QoS 1 round trip   ${fmt(mqtt)}`);
  console.log(
    `  ratio                     p50 ${(pct(trips, 50) / pct(floor, 50)).toFixed(1)}×   p99 ${(pct(trips, 99) / pct(floor, 99)).toFixed(1)}× the floor`,
  );
  console.log(`Time to the ended command: ${waited.length} with Prefer: wait, ${polite.length} polling`);
  console.log(`  POST with Prefer: wait    ${fmt(waited)}`);
  console.log(
    `  ratio                     p50 ${(pct(waited, 50) / pct(floor, 50)).toFixed(1)}×   p99 ${(pct(waited, 99) / pct(floor, 99)).toFixed(1)}× the floor`,
  );
  console.log(
    `  Prefer: wait vs durable floor  p50 ${(pct(waited, 50) / pct(durable, 50)).toFixed(1)}×   p99 ${(pct(waited, 99) / pct(durable, 99)).toFixed(1)}× the durable floor (HTTP + 2 × MQTT + 4 commits)`,
  );
  console.log(`  durable floor             ${fmt(durable)}`);
  console.log(`    durable commit          ${fmt(commits)}   (SQLite WAL, synchronous=FULL, one row)`);
  console.log(`  POST, then GET every 1 s  ${fmt(polite)}`);
  console.log("  where a waited command's time went (cloud clock, ms resolution):");
  for (const [k, xs] of stages) console.log(`    ${k.padEnd(48)} ${fmt(xs)}`);
  console.log(
    `Gateway daemon resident memory: idle ${idleRss.toFixed(1)} MB, under load (peak) ${peakRss.toFixed(1)} MB`,
  );
} finally {
  box.step("stopping the gateway daemon");
  // A daemon that already exited (crashed) has nothing left to kill; its exit was recorded above.
  if (gateway.exitCode === null && gateway.signalCode === null) gateway.kill("SIGTERM");
  await gatewayExited;
  box.step("closing the cloud, the broker and the simulated hardware");
  sweeper.stop();
  await app.close();
  await link.close();
  await broker.close();
  await sim.close();
  await db.destroy();
  rmSync(dir, { recursive: true, force: true });
}
box.finished();
