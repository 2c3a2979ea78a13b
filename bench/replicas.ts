/**
 * One cloud replica against two (issue 10, target 6): the real `cloud/main.ts` as processes of their own on
 * one PostgreSQL schema and one Mosquitto, the replicas in one shared-subscription group, the requests
 * spread over them in turn as a balancer would. Simulated gateways (one MQTT client speaking for all of
 * them) answer every command at once. Two loads, each for DURATION seconds after a 2 s warm-up:
 *   - commands: WORKERS closed loops POST sync-device to a device (each device at most once per 3.2 s, the
 *     cloud's throttle) and wait for the cloud to acknowledge the gateway's SUCCESS: commands/s, p50, p99;
 *   - reports: gateways' device_state reports, WINDOW unacknowledged at a time: reports applied/s.
 * Printed with each replica's CPU and the machine's, so a figure that does not double says why.
 * Each count runs ROUNDS times, alternated (1, 2, 2, 1), and the means are compared.
 *   npm run bench:replicas   (GATEWAYS=100 × 16 lockers, WORKERS=64, WINDOW=256, DURATION=10, ROUNDS=2)
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { availableParallelism, loadavg, tmpdir } from "node:os";
import path from "node:path";
import { sql } from "kysely";
import type { MqttClient } from "mqtt";
import pg from "pg";
import { hashSecret } from "../cloud/auth/secrets.ts";
import { connectMqtt } from "../cloud/gateway-link/mqtt-client.ts";
import { derivedId } from "../cloud/manifest/apply-manifest.ts";
import { type Db, openDb } from "../cloud/store/db.ts";
import { CommandRequest } from "../shared/wire/messages.ts";
import { parseTopic, topicFor } from "../shared/wire/topics.ts";
import { freePort, startPrivateMosquitto } from "../test/support/private-mosquitto.ts";
import { printRuntime } from "./runtime.ts";
import { DURATION, declareOperator, lockers } from "./support.ts";
import { timeBox } from "./time-box.ts";

printRuntime();

const GATEWAYS = Number(process.env.GATEWAYS ?? 100);
const PER_GATEWAY = 16;
const WORKERS = Number(process.env.WORKERS ?? 64);
const WINDOW = Number(process.env.WINDOW ?? 256);
const WARMUP_S = 2;
/** Runs of each replica count, alternated. */
const ROUNDS = Number(process.env.ROUNDS ?? 2);
/** The cloud refuses a second command to a device within 3 s (its throttle): a device rests this long. */
const DEVICE_REST_MS = 3_200;
const PG_URL = process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const OP = "dddddddd-0000-4000-8000-0000000000a6";
const SECRET = "bench-secret-123";
const TOKEN_SECRET = "bench-replicas-token-secret-of-at-least-32-bytes";
const ROOT = path.resolve(import.meta.dirname, "..");

const box = timeBox("bench:replicas", Number(process.env.BENCH_TIMEOUT_S ?? 600));

const gatewayId = (g: number) => `gw-r${g}`;
/** One location per gateway, as sites are: what one location's writes serialise on stays that site's. */
const locationCode = (g: number) => `R${g}`;
const deviceId = (g: number, d: number) =>
  derivedId(derivedId(OP, "location", locationCode(g)), "device", String(d));
const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? Number.NaN;
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** CPU seconds a process has used (user + system), from /proc. */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.split(" ") ?? [];
  return (Number(fields[11]) + Number(fields[12])) / 100;
}
/** The machine's busy and total jiffies, from /proc/stat. */
function machineTicks(): { busy: number; total: number } {
  const cpu = (readFileSync("/proc/stat", "utf8").split("\n")[0] ?? "")
    .trim()
    .split(/\s+/)
    .slice(1)
    .map(Number);
  const total = cpu.reduce((a, b) => a + b, 0);
  const idle = (cpu[3] ?? 0) + (cpu[4] ?? 0);
  return { busy: total - idle, total };
}

/** A schema of the run's own with the bench operator: GATEWAYS locations of one gateway and PER_GATEWAY lockers. */
async function openStore(tag: string): Promise<{ db: Db; url: string; drop(): Promise<void> }> {
  const schema = `bench_replicas_${process.pid}_${tag}`;
  const db = await openDb({ kind: "postgres", url: PG_URL, schema });
  const hash = await hashSecret(SECRET);
  await declareOperator(db, {
    id: OP,
    name: "Replicas bench",
    clients: [{ client_id: "bench", secret_hash: hash, permissions: ["DEVICE_ADMIN"] }],
    locations: Array.from({ length: GATEWAYS }, (_, g) => ({
      code: locationCode(g),
      label: `Replicas bench lockers ${g}`,
      type: "BIKE_LOCKERS" as const,
      latitude: 52,
      longitude: 4,
      gateways: [{ id: gatewayId(g), secret_hash: hash, devices: lockers(PER_GATEWAY) }],
    })),
  });
  const url = new URL(PG_URL);
  url.searchParams.set("options", `-c search_path=${schema}`);
  return {
    db,
    url: url.toString(),
    async drop() {
      await db.destroy();
      const c = new pg.Client({ connectionString: PG_URL });
      await c.connect();
      await c.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await c.end();
    },
  };
}

type Replica = { base: string; child: ChildProcess; stop(): Promise<void> };
/** Replicas running now: interrupted, the bench takes them down with it. */
const running = new Set<ChildProcess>();

/** `cloud/main.ts` as replica `i`: a broker user (hence session) of its own, the group, the shared secret. */
async function startReplica(i: number, env: Record<string, string>): Promise<Replica> {
  const port = await freePort();
  const dataDir = mkdtempSync(path.join(tmpdir(), "parking-bench-replica-"));
  const child = spawn(process.execPath, ["--import", "tsx", path.join(ROOT, "cloud/main.ts")], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? "",
      HOME: process.env.HOME ?? "",
      HOST: "127.0.0.1",
      PORT: String(port),
      DATA_DIR: dataDir,
      LOG_LEVEL: "warn",
      MQTT_USERNAME: `cloud-${i}`,
      MQTT_PASSWORD: "bench-broker-password",
      MQTT_SHARE_GROUP: "bench",
      // One secret and one issuer: a token any replica issued is good at every other.
      TOKEN_SECRET,
      AUTH_URL: "http://cloud.bench.invalid",
      ...env,
    },
    stdio: ["ignore", "ignore", "inherit"],
  });
  box.own(child);
  running.add(child);
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  void exited.then(() => running.delete(child));
  const base = `http://127.0.0.1:${port}`;
  for (let tries = 0; ; tries++) {
    if (child.exitCode !== null)
      throw new Error(`replica ${i} exited (${child.exitCode}) before it was ready`);
    const ok = await fetch(`${base}/readyz`).then(
      (r) => r.status === 200,
      () => false,
    );
    if (ok) break;
    if (tries > 400) throw new Error(`replica ${i} not ready after 40 s`);
    await sleep(100);
  }
  return {
    base,
    child,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      await exited;
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * Every simulated gateway behind one MQTT client: answers each command with RECEIVED and SUCCESS at once,
 * sends reports, and resolves whoever waits for the cloud's acknowledgement of a seq.
 */
async function startGateways(url: string, prefix: string) {
  const client: MqttClient = connectMqtt(url, { clientId: `bench-gateways-${prefix}`, reconnectPeriod: 0 });
  await new Promise<void>((resolve, reject) => {
    client.once("connect", () => resolve());
    client.once("error", reject);
  });
  const seqs = new Map<string, number>();
  const waiting = new Map<string, () => void>();
  const nextSeq = (gw: string) => {
    const n = (seqs.get(gw) ?? 0) + 1;
    seqs.set(gw, n);
    return n;
  };
  /** Publishes an up message and resolves once the cloud acknowledges it. */
  const up = (gw: string, body: Record<string, unknown>): Promise<void> => {
    const seq = nextSeq(gw);
    const acked = new Promise<void>((r) => waiting.set(`${gw}:${seq}`, r));
    void client.publishAsync(
      topicFor(prefix, gw, "up"),
      JSON.stringify({ gateway_id: gw, seq, observed_at: new Date().toISOString(), ...body }),
      { qos: 1 },
    );
    return acked;
  };
  /** Command id → resolves once its SUCCESS is applied; ids applied before anyone asked. */
  const succeeded = new Map<string, () => void>();
  const early = new Set<string>();
  client.on("message", (topic, raw) => {
    const t = parseTopic(prefix, topic);
    if (!t) return;
    const body = JSON.parse(raw.toString()) as unknown;
    if (t.channel === "ack") {
      for (const s of (body as { seqs: number[] }).seqs) {
        const key = `${t.gatewayId}:${s}`;
        waiting.get(key)?.();
        waiting.delete(key);
      }
      return;
    }
    if (t.channel !== "cmd") return;
    const cmd = CommandRequest.parse(body);
    const progress = { type: "command_progress", command_id: cmd.command_id, device_id: cmd.device_id };
    void up(t.gatewayId, { ...progress, state: "RECEIVED" });
    void up(t.gatewayId, { ...progress, state: "SUCCESS", lock_state: "UNLOCKED" }).then(() => {
      const waiter = succeeded.get(cmd.command_id);
      if (!waiter) return void early.add(cmd.command_id);
      waiter();
      succeeded.delete(cmd.command_id);
    });
  });
  await client.subscribeAsync({
    [`${prefix}/v1/gw/+/cmd`]: { qos: 1 },
    [`${prefix}/v1/gw/+/ack`]: { qos: 1 },
  });
  return {
    up,
    /** Resolves once command `id` has succeeded (its SUCCESS may be applied before the POST answers). */
    whenSucceeded: (id: string) =>
      new Promise<void>((r) => {
        if (early.delete(id)) r();
        else succeeded.set(id, r);
      }),
    close: () => client.endAsync(true),
  };
}

type Load = {
  rate: number;
  p50?: number;
  p99?: number;
  errors: number;
  /** Cores used: each replica, the PostgreSQL backends serving them, this load generator; the machine. */
  replicaCpu: number[];
  pgCpu: number;
  generatorCpu: number;
  machineBusy: number;
};

/**
 * CPU seconds of the PostgreSQL backends serving the replicas (named by application_name), sampled twice
 * a second: a backend's time counts from its first sample, so a connection's first half second is missed.
 */
function pgBackendCpu(db: Db) {
  const last = new Map<number, number>();
  let total = 0;
  const tick = async () => {
    const rows = await sql<{ pid: number }>`select pid from pg_stat_activity
      where application_name like 'bench-replica-%'`.execute(db);
    for (const { pid } of rows.rows) {
      let now: number;
      try {
        now = cpuSeconds(pid);
      } catch {
        continue; // gone meanwhile
      }
      const before = last.get(pid);
      if (before !== undefined) total += now - before;
      last.set(pid, now);
    }
  };
  const timer = setInterval(() => void tick().catch(() => {}), 500);
  return {
    seconds: () => total,
    stop: () => clearInterval(timer),
  };
}

/** Runs `load` for WARMUP_S + DURATION seconds, counting only the measured part, with CPU use. */
async function measured(
  replicas: Replica[],
  db: Db,
  load: (until: number, record: (latencyMs: number | null) => void) => Promise<void>,
): Promise<Load> {
  const latencies: number[] = [];
  let errors = 0;
  let start = Number.POSITIVE_INFINITY;
  const warmEnd = Date.now() + WARMUP_S * 1000;
  const end = warmEnd + DURATION * 1000;
  let cpu0: number[] = [];
  let m0 = machineTicks();
  let pg0 = 0;
  let own0 = process.cpuUsage();
  const pg = pgBackendCpu(db);
  const startMeasuring = setTimeout(() => {
    start = Date.now();
    cpu0 = replicas.map((r) => cpuSeconds(r.child.pid as number));
    m0 = machineTicks();
    pg0 = pg.seconds();
    own0 = process.cpuUsage();
  }, WARMUP_S * 1000);
  await load(end, (ms) => {
    if (Date.now() < start) return;
    if (ms === null) errors++;
    else latencies.push(ms);
  });
  clearTimeout(startMeasuring);
  pg.stop();
  const seconds = (Date.now() - start) / 1000;
  const m1 = machineTicks();
  const own = process.cpuUsage(own0);
  const cpu = replicas.map((r, i) => (cpuSeconds(r.child.pid as number) - (cpu0[i] ?? 0)) / seconds);
  return {
    rate: latencies.length / seconds,
    p50: pct(latencies, 50),
    p99: pct(latencies, 99),
    errors,
    replicaCpu: cpu,
    pgCpu: (pg.seconds() - pg0) / seconds,
    generatorCpu: (own.user + own.system) / 1e6 / seconds,
    machineBusy: (m1.busy - m0.busy) / Math.max(1, m1.total - m0.total),
  };
}

async function runWith(n: number, brokerUrl: string): Promise<{ idle: Load; commands: Load; reports: Load }> {
  box.step(`${n} replica(s): filling the store`);
  const store = await openStore(`${n}_${Math.random().toString(36).slice(2, 6)}`);
  const prefix = `brep${n}${Math.random().toString(36).slice(2, 6)}`;
  const replicas: Replica[] = [];
  const gateways = await startGateways(brokerUrl, prefix);
  try {
    box.step(`${n} replica(s): starting`);
    for (let i = 0; i < n; i++)
      replicas.push(
        await startReplica(i + 1, {
          DATABASE_URL: `${store.url}&application_name=bench-replica-${i + 1}`,
          MQTT_URL: brokerUrl,
          MQTT_PREFIX: prefix,
        }),
      );
    // Idle: what the replicas' own rounds (deadlines, webhooks, health, maps, keys) cost with no load.
    box.step(`${n} replica(s): idle`);
    const idle = await measured(replicas, store.db, async (until) => {
      await sleep(until - Date.now());
    });
    const tokenRes = await fetch(`${replicas[0]?.base}/oauth2/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: `grant_type=client_credentials&client_id=bench&client_secret=${SECRET}`,
    });
    const { access_token } = (await tokenRes.json()) as { access_token: string };
    const headers = { authorization: `Bearer ${access_token}`, "content-type": "application/json" };

    // Commands: the balancer's turn-taking over the replicas, devices taken in turn after their rest.
    box.step(`${n} replica(s): commands`);
    const devices = Array.from({ length: GATEWAYS * PER_GATEWAY }, (_, k) =>
      deviceId(Math.floor(k / PER_GATEWAY), (k % PER_GATEWAY) + 1),
    );
    const restUntil = new Map<string, number>();
    let nextDevice = 0;
    let nextReplica = 0;
    const commands = await measured(replicas, store.db, async (until, record) => {
      const worker = async () => {
        while (Date.now() < until) {
          const device = devices[nextDevice++ % devices.length] as string;
          const wait = (restUntil.get(device) ?? 0) - Date.now();
          if (wait > 0) await sleep(wait);
          restUntil.set(device, Date.now() + DEVICE_REST_MS);
          const base = replicas[nextReplica++ % replicas.length]?.base;
          const t0 = performance.now();
          const res = await fetch(`${base}/device/v1/devices/${device}/commands`, {
            method: "POST",
            headers,
            body: JSON.stringify({ command: "sync-device" }),
          });
          if (res.status !== 200) {
            if (process.env.BENCH_DEBUG) console.error(res.status, await res.text());
            else await res.text();
            record(null);
            continue;
          }
          const { id } = (await res.json()) as { id: string };
          const done = await Promise.race([gateways.whenSucceeded(id).then(() => true), sleep(10_000)]);
          record(done ? performance.now() - t0 : null);
        }
      };
      await Promise.all(Array.from({ length: WORKERS }, worker));
    });

    // Reports: sensor readings from every gateway in turn, WINDOW of them unacknowledged at a time.
    box.step(`${n} replica(s): reports`);
    let g = 0;
    let door = false;
    const reports = await measured(replicas, store.db, async (until, record) => {
      const sender = async () => {
        while (Date.now() < until) {
          const gw = g++ % GATEWAYS;
          door = !door;
          const t0 = performance.now();
          await gateways.up(gatewayId(gw), {
            type: "device_state",
            device_id: deviceId(gw, 1 + (g % PER_GATEWAY)),
            door_open: door,
            cause: "hardware_event",
          });
          record(performance.now() - t0);
        }
      };
      await Promise.all(Array.from({ length: WINDOW }, sender));
    });
    return { idle, commands, reports };
  } finally {
    box.step(`${n} replica(s): stopping`);
    for (const r of replicas) await r.stop();
    await gateways.close();
    await store.drop();
  }
}

box.step("starting Mosquitto");
const mosquitto = await startPrivateMosquitto();
for (const signal of ["SIGINT", "SIGTERM"] as const)
  process.once(signal, () => {
    for (const child of running) child.kill("SIGKILL");
    void mosquitto.stop().finally(() => process.exit(1));
  });
const load = loadavg().map((l) => l.toFixed(2));
console.log(
  `bench:replicas: ${GATEWAYS} gateways × ${PER_GATEWAY} lockers, ${WORKERS} command loops, ${WINDOW} reports in flight, ${DURATION} s each; load average before: ${load.join(" ")} on ${availableParallelism()} cores`,
);
/** 1, 2, 2, 1, …: each count runs as often, early and late, so a machine that gets busier favours neither. */
const order = Array.from({ length: ROUNDS }, (_, r) => (r % 2 === 0 ? [1, 2] : [2, 1])).flat();
const results: { n: number; idle: Load; commands: Load; reports: Load }[] = [];
try {
  for (const n of order) {
    const r = { n, ...(await runWith(n, mosquitto.url)) };
    results.push(r);
    printRun(r);
  }
} finally {
  await mosquitto.stop();
}

function printRun({ n, idle, commands, reports }: (typeof results)[number]) {
  const pc = (x: number) => `${(x * 100).toFixed(0)}%`;
  const cpu = (l: Load) =>
    `CPU: replicas ${l.replicaCpu.map(pc).join(" + ")}, their PostgreSQL ${pc(l.pgCpu)}, load generator ${pc(l.generatorCpu)}; machine ${pc(l.machineBusy)} busy`;
  console.log(`\n${n} replica${n > 1 ? "s" : ""}`);
  console.log(`  idle      ${"".padStart(6)}     ${cpu(idle)}`);
  console.log(
    `  commands  ${commands.rate.toFixed(0).padStart(6)}/s   POST → SUCCESS applied: p50 ${commands.p50?.toFixed(1)} ms   p99 ${commands.p99?.toFixed(1)} ms   refused ${commands.errors}\n            ${cpu(commands)}`,
  );
  console.log(
    `  reports   ${reports.rate.toFixed(0).padStart(6)}/s   publish → ack: p50 ${reports.p50?.toFixed(1)} ms   p99 ${reports.p99?.toFixed(1)} ms\n            ${cpu(reports)}`,
  );
}

const mean = (n: number, f: (r: (typeof results)[number]) => number) => {
  const xs = results.filter((r) => r.n === n).map(f);
  return xs.reduce((a, b) => a + b, 0) / xs.length;
};
const ratio = (f: (r: (typeof results)[number]) => number) => (mean(2, f) / mean(1, f)).toFixed(2);
console.log(
  `\nmean of ${ROUNDS} run${ROUNDS > 1 ? "s" : ""} each: one replica ${mean(1, (r) => r.commands.rate).toFixed(0)} commands/s, ${mean(1, (r) => r.reports.rate).toFixed(0)} reports/s; two ${mean(2, (r) => r.commands.rate).toFixed(0)} commands/s, ${mean(2, (r) => r.reports.rate).toFixed(0)} reports/s`,
);
console.log(
  `two replicas against one: commands ${ratio((r) => r.commands.rate)}×, reports ${ratio((r) => r.reports.rate)}×; load average after: ${loadavg()
    .map((l) => l.toFixed(2))
    .join(" ")}`,
);
box.finished();
