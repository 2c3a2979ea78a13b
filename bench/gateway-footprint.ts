/**
 * Gateway footprint on a site controller: the daemon's resident memory idle and under load, and parkctl's
 * start time, for the development run (TypeScript through tsx) and the production build (plain node on
 * what `npm run build` emits, the daemon and parkctl as bundles; built here into a directory of its own):
 * with node's defaults, and as parking-gateway.service runs it (its V8 flags and environment), on its
 * first start (no compile cache yet) and on every start after. The cloud with its embedded broker and a
 * lock board of 20 channels on a pseudo-terminal run in this process; the daemon runs as its own process,
 * as under systemd (NODE_ENV=production, JSON logs, log level info).
 *   npm run bench:footprint          (LOAD_S=10 s of commands on WORKERS=4 devices at once, RUNS=10 parkctl calls a figure)
 *   GATEWAY_NODE_FLAGS="--flag …" and GATEWAY_ENV="NAME=value …" try other flags and environments than the unit's.
 *   SMAPS_DIR=dir keeps each idle daemon's /proc/PID/smaps in dir.
 *   RUNNERS=unit measures only the columns whose name has that word (here the unit's two), for a quicker run.
 * Time box: 4 minutes unless BENCH_TIMEOUT_S says otherwise (time-box.ts).
 */
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import pino from "pino";
import { hashSecret } from "../cloud/auth/secrets.ts";
import { createDeadlineSweeper } from "../cloud/commands/deadline-sweeper.ts";
import { DEFAULT_COMMAND_TIMEOUTS } from "../cloud/devices/timeouts.ts";
import { startEmbeddedBroker } from "../cloud/gateway-link/embedded-broker.ts";
import { startGatewayLink } from "../cloud/gateway-link/gateway-link.ts";
import { derivedId } from "../cloud/manifest/apply-manifest.ts";
import { callControl } from "../gateway/control/control-client.ts";
import { PtyConnector } from "../hardware-sim/links.ts";
import { createSimSite } from "../hardware-sim/site.ts";
import { systemClock } from "../shared/node/system-clock.ts";
import { buildProduction, REPO } from "../test/support/production-build.ts";
import { printRuntime } from "./runtime.ts";
import { benchDb, clientToken, declareOperator, lockers, startCloud } from "./support.ts";
import { timeBox } from "./time-box.ts";

printRuntime();
const box = timeBox("bench:footprint", Number(process.env.BENCH_TIMEOUT_S ?? 240));

const LOAD_S = Number(process.env.LOAD_S ?? 10);
const RUNS = Number(process.env.RUNS ?? 10);
const DEVICES = 20;
const WORKERS = Number(process.env.WORKERS ?? 4);
const OP = "dddddddd-0000-4000-8000-000000000005";
const SECRET = "bench-secret-123";
const TARGET = { idleMb: 64, peakMb: 96, parkctlMs: 300 };
const log = pino({ level: "silent" });
const run = promisify(execFile);

const cleanups: (() => Promise<unknown> | unknown)[] = [];
const daemons = new Set<ChildProcess>();

const unitFile = readFileSync(path.join(REPO, "systemd/parking-gateway.service"), "utf8");
/**
 * The node options the gateway's unit runs the daemon with (its ExecStart), so the last columns measure
 * what a controller runs; GATEWAY_NODE_FLAGS="--flag …" tries others.
 */
const unitFlags =
  process.env.GATEWAY_NODE_FLAGS?.split(" ").filter(Boolean) ??
  /^ExecStart=\/usr\/bin\/node (.*?) ?\/opt\/parking\/dist\/gateway\/main\.js/m
    .exec(unitFile)?.[1]
    ?.split(" ")
    .filter(Boolean) ??
  [];
/** The unit's Environment= lines (GATEWAY_ENV="NAME=value …" instead), NODE_ENV aside: every run has it. */
const unitEnv = Object.fromEntries(
  (
    process.env.GATEWAY_ENV?.split(" ").filter(Boolean) ??
    [...unitFile.matchAll(/^Environment=(\S+)$/gm)].map((m) => m[1] as string)
  )
    .map((kv) => [kv.slice(0, kv.indexOf("=")), kv.slice(kv.indexOf("=") + 1)])
    .filter(([k]) => k !== "NODE_ENV"),
) as Record<string, string>;

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor((s.length - 1) / 2)] as number;
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** User and system CPU time of a process so far, in ms. */
function cpuMs(pid: number): number {
  const fields = (readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1] ?? "").split(" ");
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** VmRSS and its parts (anonymous: heaps and stacks; file: the mapped node binary and libraries), in MB. */
function memory(pid: number): { rss: number; anon: number; file: number } {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = (key: string) => Number(new RegExp(`${key}:\\s+(\\d+) kB`).exec(status)?.[1] ?? Number.NaN);
  return { rss: kb("VmRSS") / 1024, anon: kb("RssAnon") / 1024, file: kb("RssFile") / 1024 };
}

/**
 * Private_Clean + Private_Dirty from smaps_rollup, in MB: the pages this process alone holds, what each
 * process costs a controller. RSS also counts the node binary's file pages, shared with every node process.
 */
function privateMb(pid: number): number {
  const rollup = readFileSync(`/proc/${pid}/smaps_rollup`, "utf8");
  const kb = (key: string) =>
    Number(new RegExp(`^${key}:\\s+(\\d+) kB`, "m").exec(rollup)?.[1] ?? Number.NaN);
  return (kb("Private_Clean") + kb("Private_Dirty")) / 1024;
}

/** Wall time of one process from spawn to exit, in ms; a non-zero exit fails the bench. */
async function timed(argv: string[], env: Record<string, string> = {}): Promise<number> {
  const t0 = performance.now();
  const [cmd = "", ...args] = argv;
  await run(cmd, args, { cwd: REPO, env: { ...process.env, ...env } });
  return performance.now() - t0;
}

async function medianOf(argv: string[], env: Record<string, string> = {}): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) times.push(await timed(argv, env));
  return median(times);
}

try {
  console.log("Gateway footprint: the daemon's resident memory idle and under load, parkctl's start time");
  box.step("building into a directory of its own");
  const build = await buildProduction();
  cleanups.push(() => build.remove());
  // Inside the repository: gone even when the time box ends the bench.
  process.once("exit", () => rmSync(build.out, { recursive: true, force: true }));
  console.log(
    `  production build (tsc and the gateway's bundles, types not checked): ${(build.ms / 1000).toFixed(1)} s`,
  );

  // Cloud: SQLite, embedded broker, the gateway link; no throttle so one device can be driven back to back.
  const { dir, db } = await benchDb("parking-bench-footprint-");
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const hash = await hashSecret(SECRET);
  await declareOperator(db, {
    id: OP,
    name: "Bench",
    clients: [{ client_id: "bench", secret_hash: hash, permissions: [] }],
    // A site per daemon measured (four runs at most), so none inherits another's commands in flight.
    locations: [0, 1, 2, 3].map((n) => ({
      code: `BENCH${n}`,
      label: `Bench lockers ${n}`,
      type: "BIKE_LOCKERS" as const,
      latitude: 52,
      longitude: 4,
      gateways: [
        {
          id: `gw-bench-${n}`,
          secret_hash: hash,
          devices: lockers(DEVICES).map((d, i) => ({ ...d, bus: { board: 1, channel: i + 1 } })),
        },
      ],
    })),
  });
  const cloudMqtt = { username: "cloud", password: "bench-cloud-password" };
  const broker = await startEmbeddedBroker({ db, log, port: 0, prefix: "bench", cloud: cloudMqtt });
  const brokerUrl = `mqtt://127.0.0.1:${broker.port}`;
  const timeouts = { ...DEFAULT_COMMAND_TIMEOUTS, throttleMs: 0, throttlePowerSaveMs: 0 };
  const link = await startGatewayLink(
    { brokerUrl, ...cloudMqtt, clientId: cloudMqtt.username, prefix: "bench" },
    { db, clock: systemClock, log, timeouts },
  );
  const { app, port } = await startCloud(db, { log, gateways: link, timeouts });
  const sweeper = createDeadlineSweeper({ db, clock: systemClock, timeouts, log });
  sweeper.start();
  cleanups.push(
    () => db.destroy(),
    () => broker.close(),
    () => link.close(),
    () => app.close(),
    () => sweeper.stop(),
  );
  const base = `http://127.0.0.1:${port}`;
  const auth = {
    authorization: `Bearer ${await clientToken(app, SECRET)}`,
    "content-type": "application/json",
  };
  const device = (n: number, i: number) =>
    derivedId(derivedId(OP, "location", `BENCH${n}`), "device", String(i + 1));

  /** Locks device i of site n if it is unlocked, else unlocks it; polls until the command settles: true on SUCCESS. */
  async function toggle(n: number, i: number): Promise<boolean> {
    let state = "";
    for (const end = performance.now() + 10_000; performance.now() < end; await sleep(10)) {
      const d = (await (
        await fetch(`${base}/device/v1/devices/${device(n, i)}`, { headers: auth })
      ).json()) as {
        state: { value: string };
      };
      state = d.state.value;
      // A command still in flight on it (ALLOCATED, LOCKING, UNLOCKING) settles first.
      if (state === "LOCKED" || state === "UNLOCKED") break;
    }
    const name = state === "LOCKED" ? "unlock" : "lock";
    const post = await fetch(`${base}/device/v1/devices/${device(n, i)}/commands`, {
      method: "POST",
      headers: auth,
      body: JSON.stringify({ command: name }),
    });
    if (!post.ok) return false;
    const { id } = (await post.json()) as { id: string };
    for (const end = performance.now() + 10_000; performance.now() < end; await sleep(10)) {
      const c = (await (await fetch(`${base}/device/v1/commands/${id}`, { headers: auth })).json()) as {
        state: { value: string };
      };
      if (c.state.value === "SUCCESS") return true;
      if (c.state.value === "ERROR") return false;
    }
    return false;
  }

  type Runner = { name: string; daemon: string[]; parkctl: string[]; env?: Record<string, string> };
  const runners: Runner[] = [
    {
      name: "tsx (development)",
      daemon: [process.execPath, "--import", "tsx", path.join(REPO, "gateway/main.ts")],
      parkctl: [process.execPath, "--import", "tsx", path.join(REPO, "gateway/cli/parkctl.ts")],
    },
    {
      name: "built JavaScript",
      daemon: [process.execPath, path.join(build.out, "gateway/main.js")],
      parkctl: [process.execPath, path.join(build.out, "gateway/cli/parkctl.js")],
    },
  ];
  if (unitFlags.length > 0 || Object.keys(unitEnv).length > 0) {
    // The unit's compile cache directory is the controller's; here one of the run's own, empty at first:
    // the first start writes it (as on a controller after an install or update), the next one reads it.
    const env = { ...unitEnv };
    if (env.NODE_COMPILE_CACHE) env.NODE_COMPILE_CACHE = path.join(dir, "compile-cache");
    const daemon = [process.execPath, ...unitFlags, path.join(build.out, "gateway/main.js")];
    if (env.NODE_COMPILE_CACHE) runners.push({ name: "the unit, first start", daemon, parkctl: [], env });
    runners.push({ name: "the unit", daemon, parkctl: [], env });
  }

  const only = process.env.RUNNERS;
  if (only) runners.splice(0, runners.length, ...runners.filter((r) => r.name.includes(only)));

  const floor = await medianOf([process.execPath, "-e", "0"]);
  const rows: Record<string, string[]> = {
    "daemon idle RSS": [],
    "  of which anonymous / file-backed": [],
    "daemon idle private (not shared)": [],
    "daemon peak RSS under load": [],
    "parkctl --version (median)": [],
    "parkctl status (median)": [],
    "commands during the load": [],
    "daemon CPU per command": [],
  };

  for (const [n, r] of runners.entries()) {
    // A simulator per daemon: a pseudo-terminal's far end goes away with the daemon that had it open.
    const simDir = path.join(dir, `sim-${n}`);
    mkdirSync(simDir);
    const sim = createSimSite(
      { moveMs: 0, buses: { bus0: { boards: [{ address: 1, channels: DEVICES, latch: "unlocked" }] } } },
      { connector: (name, b) => new PtyConnector(simDir, name, b) },
    );
    await sim.ready;
    cleanups.push(() => sim.close());
    const stateDir = path.join(dir, `gw-${n}`);
    const socket = path.join(stateDir, "control.sock");
    const configFile = path.join(dir, `gateway-${n}.json`);
    writeFileSync(
      configFile,
      JSON.stringify({
        gateway_id: `gw-bench-${n}`,
        secret: SECRET,
        broker: { url: brokerUrl, prefix: "bench" },
        state_dir: stateDir,
        control_socket: socket,
        buses: [{ name: "bus0", path: path.join(simDir, "bus0"), boards: [1] }],
      }),
    );
    const [cmd = "", ...args] = r.daemon;
    const daemon = spawn(cmd, [...args, "--config", configFile], {
      cwd: REPO,
      stdio: ["ignore", "ignore", "inherit"],
      env: { ...process.env, ...r.env, NODE_ENV: "production", LOG_FORMAT: "json" },
    });
    box.own(daemon);
    daemons.add(daemon);
    const pid = daemon.pid as number;
    box.step(`${r.name}: waiting for the daemon to drive its devices`);

    // Ready once it drives its devices (it has the cloud's device map) and a command goes through end to
    // end; then left alone to settle.
    for (let tries = 0; ; tries++) {
      const devices = await callControl(socket, "devices", {}).catch(() => []);
      if ((devices as { reachable?: boolean }[]).some((d) => d.reachable) && (await toggle(n, 0))) break;
      if (tries > 150) throw new Error(`${r.name}: the daemon never completed a command`);
      await sleep(200);
    }
    box.step(`${r.name}: sampling the idle daemon`);
    await sleep(5_000);
    const idle: ReturnType<typeof memory>[] = [];
    const idlePrivate: number[] = [];
    for (let i = 0; i < 5; i++) {
      idle.push(memory(pid));
      idlePrivate.push(privateMb(pid));
      await sleep(500);
    }
    const idleRss = median(idle.map((m) => m.rss));
    rows["daemon idle RSS"]?.push(`${idleRss.toFixed(1)} MB`);
    rows["  of which anonymous / file-backed"]?.push(
      `${median(idle.map((m) => m.anon)).toFixed(1)} / ${median(idle.map((m) => m.file)).toFixed(1)} MB`,
    );
    rows["daemon idle private (not shared)"]?.push(`${median(idlePrivate).toFixed(1)} MB`);
    // SMAPS_DIR=dir keeps each idle daemon's /proc/PID/smaps there, to see where its memory is.
    if (process.env.SMAPS_DIR)
      writeFileSync(path.join(process.env.SMAPS_DIR, `smaps-${n}.txt`), readFileSync(`/proc/${pid}/smaps`));

    if (r.parkctl.length > 0) {
      box.step(`${r.name}: timing parkctl`);
      rows["parkctl --version (median)"]?.push(
        `${(await medianOf([...r.parkctl, "--version"])).toFixed(0)} ms`,
      );
      rows["parkctl status (median)"]?.push(
        `${(await medianOf([...r.parkctl, "--socket", socket, "status"])).toFixed(0)} ms`,
      );
    } else {
      // parkctl is the same program whatever the daemon runs with.
      rows["parkctl --version (median)"]?.push("—");
      rows["parkctl status (median)"]?.push("—");
    }

    box.step(`${r.name}: ${LOAD_S} s of commands`);
    // Load: WORKERS devices driven lock/unlock back to back, one command in flight on each.
    let peak = idleRss;
    const cpu0 = cpuMs(pid);
    const sampler = setInterval(() => {
      peak = Math.max(peak, memory(pid).rss);
    }, 100);
    const end = performance.now() + LOAD_S * 1000;
    let done = 0;
    let failed = 0;
    await Promise.all(
      Array.from({ length: WORKERS }, async (_, i) => {
        while (performance.now() < end) {
          if (await toggle(n, i)) done++;
          else failed++;
        }
      }),
    );
    clearInterval(sampler);
    peak = Math.max(peak, memory(pid).rss);
    rows["daemon peak RSS under load"]?.push(`${peak.toFixed(1)} MB`);
    rows["commands during the load"]?.push(`${done} in ${LOAD_S} s${failed ? `, ${failed} failed` : ""}`);
    // Idle, the daemon takes ~5 ms of CPU a second: what it takes under load is the commands'.
    rows["daemon CPU per command"]?.push(`${((cpuMs(pid) - cpu0) / Math.max(1, done)).toFixed(1)} ms`);

    const exited = new Promise((resolve) => daemon.once("exit", resolve));
    daemon.kill("SIGTERM");
    await exited;
    daemons.delete(daemon);
  }

  const w = Math.max(...Object.keys(rows).map((k) => k.length));
  const cols = runners.map(
    (r, i) => Math.max(r.name.length, ...Object.values(rows).map((cells) => cells[i]?.length ?? 0)) + 4,
  );
  const line = (label: string, cells: string[], target: string) =>
    console.log(`  ${label.padEnd(w)}  ${cells.map((c, i) => c.padEnd(cols[i] ?? 0)).join("")}${target}`);
  line(
    "",
    runners.map((r) => r.name),
    "target (built)",
  );
  const targets: Record<string, string> = {
    "daemon idle RSS": `≤ ${TARGET.idleMb} MB`,
    "daemon peak RSS under load": `≤ ${TARGET.peakMb} MB`,
    "parkctl --version (median)": `≤ ${TARGET.parkctlMs} ms`,
    "parkctl status (median)": `≤ ${TARGET.parkctlMs} ms`,
  };
  for (const [label, cells] of Object.entries(rows)) line(label, cells, targets[label] ?? "");
  console.log(`  node -e 0 (the floor of any Node process): ${floor.toFixed(0)} ms (median of ${RUNS})`);
  const flags = unitFlags.join(" ");
  const env = Object.entries(unitEnv)
    .map(([k, v]) => `${k}=${v}`)
    .join(" ");
  console.log(`  the unit: node ${flags}${env ? `, ${env} (a directory of the run's own here)` : ""}`);
} finally {
  for (const d of daemons) d.kill("SIGKILL");
  for (const cleanup of cleanups.reverse()) await cleanup();
}
box.finished();
