/**
 * Fleet: how many gateways one cloud process holds. For each fleet size N, a fresh PostgreSQL schema is
 * filled through the site manifest with N gateways × 16 devices (a GUARD and 15 lockers each, 100
 * locations per operator); the real cloud (cloud/main.ts) runs as its own process on that schema and a
 * Mosquitto of the run's own; a second process plays the N gateways, each its own MQTT client speaking
 * the wire contract with the real gateway's broker link and outbox pump. After the ramp-up, for
 * FLEET_DURATION_S it measures: heartbeat intake lag, commands (POST with `Prefer: wait=10`, 5/s to
 * random lockers), the location list (2/s), the cloud's CPU and memory, the broker's memory.
 *   npm run bench:fleet                              N = 1,000, 5,000 and 10,000, 60 s each
 *   FLEET_N=200 FLEET_DURATION_S=15 npm run bench:fleet     a quick try
 *   FLEET_CPU_PROF=/tmp/prof npm run bench:fleet      profiles the cloud and prints its top costs
 *   FLEET_SCHEMA_SQL='CREATE INDEX …' npm run bench:fleet    a what-if: SQL run on the fleet's schema
 *                                                      before the cloud starts (said in the output)
 * Also: FLEET_COMMAND_RATE, FLEET_LIST_RATE, FLEET_CONNECT_RATE, FLEET_EVENTS_PER_HOUR, FLEET_RAMP_TIMEOUT_S,
 * FLEET_READY_TIMEOUT_S and BENCH_TIMEOUT_S (see time-box.ts; default 40 minutes per fleet size).
 */
import { spawnSync } from "node:child_process";
import { mkdirSync } from "node:fs";
import os from "node:os";
import { sql } from "kysely";
import { freePort, startPrivateMosquitto } from "../test/support/private-mosquitto.ts";
import { brokerDropped } from "./fleet/broker-sys.ts";
import { sampleDbActivity } from "./fleet/db-activity.ts";
import { clientId, DEVICES_PER_GATEWAY, FLEET_SECRET, operatorCount } from "./fleet/fleet-shape.ts";
import { declareFleet, openFleetStore } from "./fleet/fleet-store.ts";
import type { FleetStats } from "./fleet/ipc.ts";
import {
  commandLoad,
  failed,
  heartbeatProbes,
  locationLoad,
  max,
  pct,
  type Tally,
  tripStages,
} from "./fleet/probes.ts";
import { cpuSeconds, loadAverage, machineTicks, nofile, postgresPids, rssMb } from "./fleet/proc-stats.ts";
import {
  type CloudProcess,
  raiseNofile,
  startFleetProcess,
  startReadyCloud,
  stopProcess,
  summarizeLog,
} from "./fleet/processes.ts";
import { type MonotonicSpan, printProfileSummary } from "./fleet/profile-summary.ts";
import { rampLoad } from "./fleet/ramp-load.ts";
import { printRuntime } from "./runtime.ts";
import { timeBox } from "./time-box.ts";

printRuntime();

const env = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const SIZES = (process.env.FLEET_N ?? "1000,5000,10000").split(",").map(Number);
const DURATION_S = env("FLEET_DURATION_S", 60);
const COMMAND_RATE = env("FLEET_COMMAND_RATE", 5);
const LIST_RATE = env("FLEET_LIST_RATE", 2);
const CONNECT_RATE = env("FLEET_CONNECT_RATE", 250);
const EVENTS_PER_HOUR = env("FLEET_EVENTS_PER_HOUR", 12);
// A fleet's first start is every gateway reporting each of its devices, one durable transaction each:
// 15 minutes at 10,000 gateways on the 2-core machine. The window measures what comes after it.
const RAMP_TIMEOUT_S = env("FLEET_RAMP_TIMEOUT_S", 1_500);
const READY_TIMEOUT_S = env("FLEET_READY_TIMEOUT_S", 600);
const CPU_PROF = process.env.FLEET_CPU_PROF;
const SCHEMA_SQL = process.env.FLEET_SCHEMA_SQL;
/** Outbox messages allowed to wait for the cloud's ack before the ramp pauses. */
const MAX_PENDING_UP = 5_000;
/** A GUARD whose last heartbeat applied is older than two periods: its gateway looks gone. */
const STALE_MS = 20_000;
const TARGET_P99_MS = 250;

const box = timeBox("bench:fleet", env("BENCH_TIMEOUT_S", 2_400 * SIZES.length));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const f0 = (x: number) => (Number.isFinite(x) ? x.toFixed(0) : "–");
const f1 = (x: number) => (Number.isFinite(x) ? x.toFixed(1) : "–");

type Result = {
  n: number;
  rampS: number;
  rampDone: boolean;
  lag: { p50: number; p99: number; max: number; count: number; lost: number };
  staleMax: number;
  commands: Tally;
  lists: Tally;
  cloudCpuPct: number;
  cloudRssMb: number;
  brokerRssMb: number;
  stops: string[];
};

const notMeasured = (n: number): Result => ({
  n,
  rampS: Number.NaN,
  rampDone: false,
  lag: { p50: Number.NaN, p99: Number.NaN, max: Number.NaN, count: 0, lost: 0 },
  staleMax: Number.NaN,
  commands: { latencies: [], failures: new Map() },
  lists: { latencies: [], failures: new Map() },
  cloudCpuPct: Number.NaN,
  cloudRssMb: Number.NaN,
  brokerRssMb: Number.NaN,
  stops: [],
});

function describeMachine(): void {
  // `mosquitto -h` prints its version and exits 3.
  const mosquitto = spawnSync("mosquitto", ["-h"], { encoding: "utf8" }).stdout.split("\n")[0]?.trim();
  console.log(
    `Machine: ${os.cpus()[0]?.model ?? "?"}, ${os.availableParallelism()} cores, ` +
      `${(os.totalmem() / 2 ** 30).toFixed(0)} GB; ${mosquitto}; open files (soft/hard) here ${nofile("self")}`,
  );
  console.log(
    `Fleet: N gateways × ${DEVICES_PER_GATEWAY} devices; ${DURATION_S} s measured after the ramp-up; ` +
      `commands ${COMMAND_RATE}/s, location lists ${LIST_RATE}/s, ${EVENTS_PER_HOUR} door events per gateway an hour`,
  );
  console.log(`Load average before: ${loadAverage()}`);
}

async function tokenFor(base: string, k: number): Promise<string> {
  const res = await fetch(`${base}/oauth2/token`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: `grant_type=client_credentials&client_id=${clientId(k)}&client_secret=${FLEET_SECRET}`,
  });
  if (!res.ok) throw new Error(`token for ${clientId(k)}: HTTP ${res.status}`);
  return ((await res.json()) as { access_token: string }).access_token;
}

/** CPU seconds of PostgreSQL's processes now (backends that come and go between two reads are missed). */
function postgresCpu(): Map<number, number> {
  return new Map(postgresPids().map((pid) => [pid, cpuSeconds(pid)]));
}
function cpuBetween(a: Map<number, number>, b: Map<number, number>): number {
  let s = 0;
  for (const [pid, end] of b) if (Number.isFinite(end)) s += end - (a.get(pid) ?? 0);
  return s;
}

async function runFleet(n: number): Promise<Result> {
  console.log(
    `\n── N = ${n.toLocaleString("en")} gateways (${(n * DEVICES_PER_GATEWAY).toLocaleString("en")} devices)`,
  );
  const stops: string[] = [];
  box.step(`N=${n}: declaring the fleet`);
  let t = performance.now();
  const store = await openFleetStore(n);
  try {
    await declareFleet(store.db, n);
    console.log(
      `  set-up    fleet declared in ${f1((performance.now() - t) / 1000)} s (schema ${store.schema})`,
    );
    if (SCHEMA_SQL) {
      await sql.raw(SCHEMA_SQL).execute(store.db);
      console.log(
        `  WHAT-IF   not the cloud as it is: ran ${SCHEMA_SQL} on the schema before the cloud started`,
      );
    }

    box.step(`N=${n}: starting Mosquitto and the cloud`);
    const broker = await startPrivateMosquitto();
    const brokerPid = broker.pid as number;
    // The time box kills what it owns and exits; the broker is not a child it knows, so it goes here.
    const killBroker = () => {
      try {
        process.kill(brokerPid, "SIGKILL");
      } catch {}
    };
    process.once("exit", killBroker);
    const brokerLimit = raiseNofile(brokerPid, n + 1_024);
    const prefix = `fleet${process.pid}n${n}`;
    t = performance.now();
    const profDir = CPU_PROF ? `${CPU_PROF}/n${n}` : undefined;
    if (profDir) mkdirSync(profDir, { recursive: true });
    // Named, so the database sampler can tell the cloud's connections from everyone else's.
    const appName = `fleet-cloud-${process.pid}-${n}`;
    const cloudDbUrl = new URL(store.url);
    cloudDbUrl.searchParams.set("application_name", appName);
    const probes = heartbeatProbes({ databaseUrl: store.url });
    let cloud: CloudProcess | null = null;
    let fleet: ReturnType<typeof startFleetProcess> | null = null;
    let window: MonotonicSpan | undefined;
    const monotonicUs = () => Number(process.hrtime.bigint() / 1000n);
    try {
      box.step(`N=${n}: waiting for the cloud to be ready`);
      try {
        cloud = await startReadyCloud(box, {
          databaseUrl: cloudDbUrl.toString(),
          mqttUrl: broker.url,
          prefix,
          port: await freePort(),
          cpuProfDir: profDir,
          readyTimeoutS: READY_TIMEOUT_S,
        });
      } catch (err) {
        // Where it stops before a gateway has connected: reported like any other stop.
        const why = (err as Error).message.split("\n")[0] ?? "";
        console.log(`  verdict   stops: ${why}`);
        return { ...notMeasured(n), stops: [why] };
      }
      const cloudLimit = raiseNofile(cloud.pid, 4_096);
      console.log(
        `  set-up    cloud ready in ${f1((performance.now() - t) / 1000)} s (it publishes every device map first)`,
      );
      const tokens: string[] = [];
      for (let k = 0; k < operatorCount(n); k++) tokens.push(await tokenFor(cloud.base, k));

      // The fleet, and a way to ask it how it is doing.
      box.step(`N=${n}: ramping up the fleet`);
      const sim = startFleetProcess(box, {
        brokerUrl: broker.url,
        prefix,
        gateways: n,
        connectRate: CONNECT_RATE,
        maxPendingUp: MAX_PENDING_UP,
        eventsPerHour: EVENTS_PER_HOUR,
        probeEvery: Math.max(1, Math.round(n / 50)),
      });
      fleet = sim;
      const simLimit = raiseNofile(sim.pid, n + 1_024);
      console.log(
        `  limits    open files (soft/hard): fleet ${simLimit}, Mosquitto ${brokerLimit}, cloud ${cloudLimit}; ` +
          "Mosquitto max_connections unset (unlimited)",
      );
      let waiting: ((s: FleetStats) => void) | null = null;
      sim.on((m) => {
        if (m.kind === "probe") probes.onProbe(m.gateway, m.at);
        else if (m.kind === "stats") waiting?.(m);
      });
      const stats = (resetDelay = false) =>
        new Promise<FleetStats>((resolve, reject) => {
          const timer = setTimeout(() => reject(new Error("the fleet process did not answer")), 30_000);
          waiting = (s) => {
            clearTimeout(timer);
            resolve(s);
          };
          sim.send({ kind: "stats", resetDelay });
        });

      // Ramp: every gateway connected, holding its map, its first reports applied, and every device
      // recorded once by the cloud's connection watch (a first start's one-off cost, not the steady state).
      t = performance.now();
      const ramp = rampLoad({
        base: cloud.base,
        tokens,
        ratePerS: COMMAND_RATE,
        gateways: n,
        pids: { cloud: cloud.pid, sim: sim.pid, broker: brokerPid },
      });
      let s = await stats();
      let unwatched = 0;
      let lastLine = 0;
      for (;;) {
        await sleep(1_000);
        s = await stats();
        ramp.onStats(s);
        const elapsed = (performance.now() - t) / 1000;
        if (s.ready === n && s.pendingUp === 0) {
          unwatched = await probes.unwatchedDevices();
          if (unwatched === 0) break;
        }
        if (elapsed > RAMP_TIMEOUT_S) break;
        if (sim.child.exitCode !== null) throw new Error("the fleet process exited");
        if (elapsed - lastLine >= 15) {
          lastLine = elapsed;
          console.log(
            `  ramp      ${f0(elapsed)} s: ${s.connected}/${n} connected, ${s.ready} with their map, ` +
              `${s.pendingUp} reports unacknowledged${unwatched ? `, ${unwatched} devices not yet watched` : ""}`,
          );
        }
      }
      const rampS = (performance.now() - t) / 1000;
      const rampDone = s.ready === n && s.pendingUp === 0 && unwatched === 0;
      console.log(
        rampDone
          ? `  ramp      ${n} gateways connected, mapped, their first reports applied and watched in ${f1(rampS)} s`
          : `  ramp      NOT DONE after ${f0(rampS)} s: ${s.connected}/${n} connected, ${s.ready} mapped, ` +
              `${s.pendingUp} reports unacknowledged (oldest ${f1(s.oldestPendingMs / 1000)} s); measuring anyway`,
      );
      for (const line of await ramp.stop()) console.log(line);
      const dropped = await brokerDropped(broker.url);
      console.log(
        `  ramp drop Mosquitto dropped ${dropped ?? "?"} messages so far (a client's queue full: a report waits for its resend)`,
      );
      if (!rampDone) stops.push(`ramp not done in ${f0(rampS)} s (${s.ready}/${n} ready)`);
      // One heartbeat period more, so every gateway has beaten since it came up.
      await sleep(10_000);

      // The measured window.
      box.step(`N=${n}: measuring for ${DURATION_S} s`);
      const before = await stats(true);
      const cpu0 = { cloud: cpuSeconds(cloud.pid), broker: cpuSeconds(brokerPid), sim: cpuSeconds(sim.pid) };
      const pg0 = postgresCpu();
      const m0 = machineTicks();
      const wall0 = performance.now();
      const windowFrom = Date.now();
      const from = monotonicUs();
      probes.record(true);
      // Both of the cloud's pools: requests and background work, and the gateway link (10 each by default).
      const activity = sampleDbActivity({ databaseUrl: store.url, applicationName: appName, poolSize: 20 });
      await activity.start();
      const commands = commandLoad({ base: cloud.base, gateways: n, tokens, ratePerS: COMMAND_RATE });
      const lists = locationLoad({ base: cloud.base, tokens, ratePerS: LIST_RATE });
      const peak = { cloud: 0, broker: 0, sim: 0 };
      let staleMax = 0;
      let oldestMax = 0;
      const end = performance.now() + DURATION_S * 1000;
      for (let k = 0; performance.now() < end; k++) {
        peak.cloud = Math.max(peak.cloud, rssMb(cloud.pid));
        peak.broker = Math.max(peak.broker, rssMb(brokerPid));
        peak.sim = Math.max(peak.sim, rssMb(sim.pid));
        if (k % 5 === 0) {
          const st = await probes.staleness(STALE_MS);
          staleMax = Math.max(staleMax, st.stale);
          oldestMax = Math.max(oldestMax, st.oldestAgeMs);
        }
        await sleep(Math.min(1_000, Math.max(0, end - performance.now())));
      }
      const wallS = (performance.now() - wall0) / 1000;
      window = { fromUs: from, toUs: monotonicUs() };
      const cpu1 = { cloud: cpuSeconds(cloud.pid), broker: cpuSeconds(brokerPid), sim: cpuSeconds(sim.pid) };
      const pgS = cpuBetween(pg0, postgresCpu());
      const m1 = machineTicks();
      const after = await stats();
      const dbLines = await activity.stop();
      box.step(`N=${n}: waiting for the last requests and probes`);
      await Promise.all([commands.stop(), lists.stop(), probes.finish()]);
      const staleEnd = await probes.staleness(STALE_MS);

      // The figures.
      const share = (a: number, b: number) => (100 * (b - a)) / wallS;
      const lagMs = probes.lags.map((l) => l.ms);
      const third = Math.floor(probes.lags.length / 3);
      const early = pct(lagMs.slice(0, third), 50);
      const late = pct(lagMs.slice(-third), 50);
      const lag = {
        p50: pct(lagMs, 50),
        p99: pct(lagMs, 99),
        max: max(lagMs),
        count: lagMs.length,
        lost: probes.lost,
      };
      const hbRate = (after.heartbeats - before.heartbeats) / wallS;
      const upRate = (after.upAppended - before.upAppended) / wallS;
      const resent = after.upPublished - before.upPublished - (after.upAppended - before.upAppended);
      const cmd = commands.tally;
      const lst = lists.tally;
      console.log(
        `  heartbeats ${f0(hbRate)}/s published; intake lag (publish → in the store) ` +
          `p50 ${f0(lag.p50)} ms, p99 ${f0(lag.p99)} ms, max ${f0(lag.max)} ms over ${lag.count} probes` +
          (lag.lost ? `, ${lag.lost} never applied within 30 s` : "") +
          `; median first third ${f0(early)} ms, last third ${f0(late)} ms`,
      );
      console.log(
        `  fleet-wide oldest GUARD heartbeat ${f1(oldestMax / 1000)} s at most; gateways without a heartbeat ` +
          `applied for ${STALE_MS / 1000} s: ${staleMax} at most, ${staleEnd.stale} at the end`,
      );
      console.log(
        `  up        ${f0(upRate)} outbox messages/s (door events and command progress); ${resent} resent; ` +
          `${after.pendingUp} unacknowledged at the end (oldest ${f1(after.oldestPendingMs / 1000)} s)`,
      );
      const failures = (tl: Tally) =>
        failed(tl)
          ? `; ${failed(tl)} failed: ${[...tl.failures].map(([w, c]) => `${c}× ${w}`).join(", ")}`
          : "";
      console.log(
        `  commands  ${cmd.latencies.length} SUCCESS, POST → SUCCESS with Prefer: wait=10 ` +
          `p50 ${f1(pct(cmd.latencies, 50))} ms, p99 ${f1(pct(cmd.latencies, 99))} ms, max ${f1(max(cmd.latencies))} ms${failures(cmd)}`,
      );
      // The slowest trips, stage by stage: where a p99 goes (the cloud's clock for the events).
      for (const trip of [...commands.trips].sort((a, b) => b.ms - a.ms).slice(0, 3)) {
        console.log(
          `            slow: ${f0(trip.ms)} ms at ${f1((trip.sentAt - windowFrom) / 1000)} s: ${tripStages(trip)}`,
        );
      }
      console.log(
        `  locations ${lst.latencies.length} lists (100 locations × 16 devices each) ` +
          `p50 ${f1(pct(lst.latencies, 50))} ms, p99 ${f1(pct(lst.latencies, 99))} ms${failures(lst)}`,
      );
      const cloudRss = rssMb(cloud.pid);
      const brokerRss = rssMb(brokerPid);
      console.log(
        `  cloud     CPU ${f0(share(cpu0.cloud, cpu1.cloud))}% of a core (user+sys), RSS ${f0(cloudRss)} MB (peak ${f0(peak.cloud)} MB)`,
      );
      console.log(
        `  Mosquitto CPU ${f0(share(cpu0.broker, cpu1.broker))}% of a core, RSS ${f1(brokerRss)} MB (peak ${f1(peak.broker)} MB); ` +
          "the run's own broker, not the shared one",
      );
      console.log(
        `  others    PostgreSQL (all its processes, shared server) ${f0((100 * pgS) / wallS)}% of a core; ` +
          `the simulated fleet ${f0(share(cpu0.sim, cpu1.sim))}%, RSS ${f0(rssMb(sim.pid))} MB, event-loop delay p99 ` +
          `${f0(after.loopDelayP99Ms)} ms; the machine ${f0((100 * (m1.busy - m0.busy)) / (m1.total - m0.total))}% busy ` +
          `(of ${os.availableParallelism()} cores)`,
      );
      console.log(
        `  wire      ${after.commands - before.commands} commands received by the fleet; ` +
          `${after.disconnects} connections lost since the start; ${after.warnings} warnings` +
          (after.outboxId ? "; up messages carry an outbox id" : "") +
          (after.firstWarnings.length ? ` (first: ${after.firstWarnings[0]})` : ""),
      );

      for (const line of dbLines) console.log(line);

      // Where it stops.
      if (lag.lost > 0) stops.push(`${lag.lost} probe heartbeats not applied within 30 s`);
      if (lag.p99 > 10_000)
        stops.push(`heartbeat lag p99 ${f1(lag.p99 / 1000)} s, beyond a heartbeat period`);
      if (third > 0 && late > 2 * early && late > 1_000)
        stops.push(`heartbeat lag growing (median ${f0(early)} → ${f0(late)} ms)`);
      if (staleEnd.stale > 0)
        stops.push(`${staleEnd.stale} gateways look dead (no heartbeat applied for 20 s)`);
      if (failed(cmd) > 0) stops.push(`${failed(cmd)} commands failed`);
      if (pct(cmd.latencies, 99) >= TARGET_P99_MS)
        stops.push(`command p99 ${f0(pct(cmd.latencies, 99))} ms ≥ ${TARGET_P99_MS} ms`);
      if (failed(lst) > 0) stops.push(`${failed(lst)} location lists failed`);
      if (after.disconnects > before.disconnects)
        stops.push(`${after.disconnects - before.disconnects} connections lost`);
      if (after.pendingUp > before.pendingUp + 100)
        stops.push(`outbox backlog growing (${before.pendingUp} → ${after.pendingUp})`);
      console.log(`  verdict   ${stops.length ? `stops: ${stops.join("; ")}` : "keeps up"}`);
      console.log(`  load      average ${loadAverage()} (1, 5, 15 min) at the end of the window`);

      return {
        n,
        rampS,
        rampDone,
        lag,
        staleMax,
        commands: cmd,
        lists: lst,
        cloudCpuPct: share(cpu0.cloud, cpu1.cloud),
        cloudRssMb: cloudRss,
        brokerRssMb: brokerRss,
        stops,
      };
    } finally {
      box.step(`N=${n}: stopping`);
      await probes.close();
      // The cloud first: the fleet's Last Wills would otherwise hand it N offline statuses to apply.
      if (cloud) {
        const stoppedAt = Date.now();
        await stopProcess(cloud.child, cloud.exited);
        const running = summarizeLog(cloud.logFile, stoppedAt);
        const stopping = summarizeLog(cloud.logFile).lines - running.lines;
        console.log(
          `  cloud log ${running.lines ? running.top.join("; ") : "no warnings or errors while running"}` +
            `${stopping ? `; ${stopping} more while stopping (messages still queued when the store closed)` : ""}` +
            ` (${cloud.logFile})`,
        );
      }
      if (fleet) {
        fleet.send({ kind: "stop" });
        await stopProcess(fleet.child, fleet.exited);
      }
      await broker.stop();
      process.off("exit", killBroker);
      if (profDir) printProfileSummary(profDir, window);
    }
  } finally {
    await store.drop();
  }
}

describeMachine();
const results: Result[] = [];
for (const n of SIZES) results.push(await runFleet(n));
console.log(`\nLoad average after: ${loadAverage()}`);

/** A latency as a person reads it: "34 ms", "2.2 s", "–" when there is none. */
const dur = (ms: number) =>
  !Number.isFinite(ms) ? "–" : ms < 1_000 ? `${ms.toFixed(0)} ms` : `${(ms / 1000).toFixed(1)} s`;
const mb = (x: number) => (Number.isFinite(x) ? `${x.toFixed(0)} MB` : "–");

console.log(`\nFleet summary (target: 10,000 gateways with command p99 < ${TARGET_P99_MS} ms)`);
console.log(
  "| gateways | ramp-up | heartbeat lag p50 / p99 | commands ok / failed | command p50 / p99 | location list p99 | cloud CPU | cloud RSS | Mosquitto RSS | verdict |",
);
console.log("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|");
for (const r of results) {
  const c = r.commands.latencies;
  const ramp = Number.isFinite(r.rampS) ? `${f0(r.rampS)} s${r.rampDone ? "" : " (not done)"}` : "–";
  console.log(
    `| ${r.n.toLocaleString("en")} | ${ramp} | ${dur(r.lag.p50)} / ${dur(r.lag.p99)} | ${c.length} / ${failed(r.commands)} | ` +
      `${dur(pct(c, 50))} / ${dur(pct(c, 99))} | ${dur(pct(r.lists.latencies, 99))} | ` +
      `${Number.isFinite(r.cloudCpuPct) ? `${f0(r.cloudCpuPct)}%` : "–"} | ${mb(r.cloudRssMb)} | ${mb(r.brokerRssMb)} | ` +
      `${r.stops.length ? `stops: ${r.stops.slice(0, 2).join("; ")}` : "keeps up"} |`,
  );
}
box.finished();
