/**
 * The fleet bench's processes: the real cloud (cloud/main.ts, configured by its environment as in
 * production) and the simulated fleet (bench/fleet/gateways.ts), each with an open-files limit raised to
 * what its connections need.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { closeSync, mkdtempSync, openSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { TimeBox } from "../time-box.ts";
import type { FromFleet, SimConfig, ToFleet } from "./ipc.ts";
import { nofile } from "./proc-stats.ts";

/**
 * Raises the soft open-files limit of `pid` to `want` (and the hard one, where we may), and answers the
 * limit in force afterwards as "soft/hard". Each MQTT connection is a descriptor.
 */
export function raiseNofile(pid: number, want: number): string {
  const [soft, hard] = nofile(pid).split("/");
  const hardN = hard === "unlimited" ? Number.POSITIVE_INFINITY : Number(hard);
  if (Number(soft) < want) {
    try {
      execFileSync("prlimit", ["--pid", String(pid), `--nofile=${want}:${Math.max(want, hardN)}`], {
        stdio: "ignore",
      });
    } catch {
      // Not allowed above the hard limit: as far as it goes.
      try {
        execFileSync("prlimit", ["--pid", String(pid), `--nofile=${hard}:${hard}`], { stdio: "ignore" });
      } catch {}
    }
  }
  return nofile(pid);
}

/** The repository: the children run from it, where `--import tsx` resolves. */
const REPO = fileURLToPath(new URL("../../", import.meta.url));
const CLOUD_MAIN = fileURLToPath(new URL("../../cloud/main.ts", import.meta.url));
const FLEET_MAIN = fileURLToPath(new URL("./gateways.ts", import.meta.url));

export type CloudProcess = {
  child: ChildProcess;
  pid: number;
  base: string;
  exited: Promise<void>;
  /** Where its log (warnings and errors, JSON lines) went. */
  logFile: string;
};

/** The cloud as production runs it: `node cloud/main.ts`, PostgreSQL and an external broker. */
export function startCloudProcess(
  box: TimeBox,
  o: { databaseUrl: string; mqttUrl: string; prefix: string; port: number; cpuProfDir?: string },
): CloudProcess {
  const dataDir = mkdtempSync(path.join(tmpdir(), "parking-fleet-cloud-"));
  const flags = o.cpuProfDir ? ["--cpu-prof", `--cpu-prof-dir=${o.cpuProfDir}`] : [];
  // To a file, summarised after the run: under overload the cloud may log thousands of lines.
  const logFile = path.join(dataDir, "cloud.log");
  const out = openSync(logFile, "a");
  const child = spawn(process.execPath, [...flags, "--import", "tsx", CLOUD_MAIN], {
    env: {
      ...process.env,
      PORT: String(o.port),
      HOST: "127.0.0.1",
      DATA_DIR: dataDir,
      DATABASE_URL: o.databaseUrl,
      MQTT_URL: o.mqttUrl,
      MQTT_PREFIX: o.prefix,
      MQTT_USERNAME: "cloud",
      MQTT_PASSWORD: "fleet-cloud-password",
      MQTT_CLIENT_ID: `cloud-${o.prefix}`,
      TOKEN_SECRET: "fleet-bench-token-secret-of-at-least-32-bytes",
      // Warnings and errors only: at info the cloud logs every state change of 160,000 devices.
      LOG_LEVEL: "warn",
      LOG_FORMAT: "json",
    },
    cwd: REPO,
    stdio: ["ignore", out, out],
  });
  closeSync(out);
  box.own(child);
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  return { child, pid: child.pid as number, base: `http://127.0.0.1:${o.port}`, exited, logFile };
}

/**
 * The cloud's log lines by level and message, most frequent first, e.g. "412× error failed to apply…";
 * only those logged before `until` (epoch ms) when given.
 */
export function summarizeLog(
  file: string,
  until = Number.POSITIVE_INFINITY,
  top = 4,
): { lines: number; top: string[] } {
  const counts = new Map<string, number>();
  let lines = 0;
  for (const line of readFileSync(file, "utf8").split("\n")) {
    if (!line.trim()) continue;
    let key = line.slice(0, 120);
    try {
      const j = JSON.parse(line) as {
        level?: number;
        time?: number;
        msg?: string;
        err?: { message?: string };
      };
      if ((j.time ?? 0) >= until) continue;
      const level =
        j.level === 40 ? "warn" : j.level === 50 ? "error" : j.level === 60 ? "fatal" : String(j.level);
      key = `${level} ${j.msg ?? ""}${j.err?.message ? ` (${j.err.message})` : ""}`;
    } catch {}
    counts.set(key, (counts.get(key) ?? 0) + 1);
    lines++;
  }
  return {
    lines,
    top: [...counts]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([k, n]) => `${n}× ${k}`),
  };
}

/** Polls /readyz until the cloud answers ready (it publishes every gateway's device map first). */
export async function untilReady(cloud: CloudProcess, timeoutMs: number): Promise<void> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    if (cloud.child.exitCode !== null) throw new Error(`the cloud exited (${cloud.child.exitCode})`);
    const ok = await fetch(`${cloud.base}/readyz`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return;
    if (Date.now() > end)
      throw new Error(
        `the cloud was not ready within ${timeoutMs / 1000} s (FLEET_READY_TIMEOUT_S): it publishes every ` +
          "gateway's device map before it listens",
      );
    await new Promise((r) => setTimeout(r, 250));
  }
}

/**
 * Starts the cloud and waits until it is ready, starting it again (at most twice) when its migration
 * check failed: Kysely's migrator reads the catalog of every schema in the database, and on a shared test
 * database another run's schema may vanish under it.
 */
export async function startReadyCloud(
  box: TimeBox,
  o: Parameters<typeof startCloudProcess>[1] & { readyTimeoutS: number },
): Promise<CloudProcess> {
  for (let attempt = 1; ; attempt++) {
    const cloud = startCloudProcess(box, o);
    try {
      await untilReady(cloud, o.readyTimeoutS * 1000);
      return cloud;
    } catch (err) {
      await stopProcess(cloud.child, cloud.exited);
      const log = readFileSync(cloud.logFile, "utf8");
      if (attempt >= 3 || !log.includes("database migration failed"))
        throw new Error(`${(err as Error).message}${log ? `: ${log.slice(0, 300)}` : ""}`);
      console.log(
        `  set-up    the cloud's migration check failed (${log.trim().slice(-120)}); starting it again`,
      );
    }
  }
}

export async function stopProcess(child: ChildProcess, exited: Promise<void>): Promise<void> {
  if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
  await exited;
}

export type FleetProcess = {
  child: ChildProcess;
  pid: number;
  exited: Promise<void>;
  send(m: ToFleet): void;
  on(listener: (m: FromFleet) => void): void;
};

export function startFleetProcess(box: TimeBox, cfg: SimConfig): FleetProcess {
  const child = spawn(process.execPath, ["--import", "tsx", FLEET_MAIN], {
    cwd: REPO,
    env: { ...process.env, FLEET_SIM: JSON.stringify(cfg) },
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  box.own(child);
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  return {
    child,
    pid: child.pid as number,
    exited,
    send: (m) => {
      if (child.connected) child.send(m);
    },
    on: (listener) => child.on("message", listener as (m: unknown) => void),
  };
}
