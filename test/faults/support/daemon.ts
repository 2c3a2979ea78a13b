import { type ChildProcess, spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { createInterface } from "node:readline";
import Database from "better-sqlite3";
import { gatewayRepository } from "../../../cloud/gateway-link/gateway-repository.ts";
import { hardwareReportRepository } from "../../../cloud/gateway-link/hardware-report-repository.ts";
import type { GatewayConfigInput } from "../../../gateway/config.ts";
import { callControl } from "../../../gateway/control/control-client.ts";
import { eventually } from "../../support/eventually.ts";
import { startPrivateMosquitto } from "../../support/private-mosquitto.ts";
import { type Site, type SiteOptions, startSite } from "../../support/site-harness.ts";

const root = path.resolve(import.meta.dirname, "../../..");

/** An outbox row of the daemon's SQLite store, read beside it (WAL lets a reader in while it runs). */
export type OutboxRow = {
  seq: number;
  type: string;
  source: string | undefined;
  /** The complete wire message. */
  body: Record<string, unknown>;
};

/**
 * The gateway daemon (`gateway/main.ts`) as a process of its own, as systemd runs it: its own config file
 * and state directory, started again from the same files after it dies.
 */
export type Daemon = {
  readonly child: ChildProcess;
  readonly stateDir: string;
  readonly configFile: string;
  /** Sends a signal (SIGKILL: dies mid-flight, nothing flushed; SIGSTOP/SIGCONT: frozen and thawed). */
  signal(sig: NodeJS.Signals): void;
  /** SIGKILL and wait for the exit. */
  kill(): Promise<void>;
  /** Starts the daemon again from the same config and state directory (after kill, or after it exited). */
  restart(): void;
  /** Resolves with the exit code (or signal) once the current process exits. */
  exited(): Promise<number | NodeJS.Signals | null>;
  /** The daemon's outbox as its store holds it now. */
  outbox(): OutboxRow[];
  /** `PRAGMA quick_check` of the daemon's store (read-only, beside it). */
  quickCheck(): string;
  /** The last seq the daemon's outbox gave out (its rows leave once acknowledged; the count stays). */
  lastSeq(): number;
  /** The identity of the daemon's outbox (the cloud's applied seqs are per outbox). */
  outboxId(): string;
  /** Calls the daemon's control socket as parkctl does (`status`, `device`, `doctor`...). */
  control<T = unknown>(method: string, params?: Record<string, unknown>): Promise<T>;
  /** The daemon's log lines (JSON, at its log level: warn unless GW_LOG says) whose `msg` is `msg`. */
  logged(msg: string): Record<string, unknown>[];
};

export type DaemonSiteOptions = Omit<SiteOptions, "broker" | "serial" | "brokerUrl"> & {
  /** Where the daemon connects for its broker instead of the site's Mosquitto (e.g. a fault proxy). */
  brokerUrlFor?: (mosquittoUrl: string) => Promise<string> | string;
  /** Where the in-process cloud connects instead of the site's Mosquitto (e.g. a proxy that holds it off). */
  cloudBrokerUrlFor?: (mosquittoUrl: string) => Promise<string> | string;
  /** Overrides of the daemon's config (merged over the site's gateway config). */
  config?: Partial<GatewayConfigInput>;
  /** The daemon's environment on top of the test's (e.g. FAKETIME and LD_PRELOAD, NOTIFY_SOCKET). */
  env?: Record<string, string>;
  /** Where the daemon keeps its state (a small tmpfs, say); default `<site dir>/gw-daemon`. */
  stateDir?: string;
};

/**
 * The real system around a real daemon: the site harness (cloud in this process, store, hardware simulator on
 * pseudo-terminals) on a private Mosquitto, its in-process gateway stopped, and `gateway/main.ts` started as
 * a child process on the same config. Ready once a board event has made it to the cloud through the daemon.
 */
export async function startDaemonSite(o: DaemonSiteOptions = {}) {
  const mosquitto = await startPrivateMosquitto();
  const cloudUrl = o.cloudBrokerUrlFor ? await o.cloudBrokerUrlFor(mosquitto.url) : mosquitto.url;
  const site: Site = await startSite({ ...o, broker: "mosquitto", serial: "pty", brokerUrl: cloudUrl });
  await site.stopGateway();
  const brokerUrl = o.brokerUrlFor ? await o.brokerUrlFor(mosquitto.url) : mosquitto.url;
  const stateDir = o.stateDir ?? path.join(site.dir, "gw-daemon");
  const configFile = path.join(site.dir, "gateway-daemon.json");
  writeFileSync(
    configFile,
    JSON.stringify({
      ...site.gatewayConfig,
      broker: { ...site.gatewayConfig.broker, url: brokerUrl },
      state_dir: stateDir,
      log_level: process.env.GW_LOG ?? "warn",
      ...o.config,
    }),
  );
  const daemon = spawnDaemon(configFile, stateDir, o.env ?? {});
  const readiness = { channel: 8 };
  return {
    site,
    mosquitto,
    daemon,
    /**
     * Resolves once a door event of board 1's channel `channel` (8 unless told) reaches the cloud's hardware
     * reports through the daemon: serial line open, broker connected, outbox pumping.
     */
    async ready(timeoutMs = 40_000, channel = readiness.channel) {
      const board = site.sim.board("bus0", 1);
      await eventually(
        async () => {
          board.event(channel, "door_opened");
          const sources = await reportedSources(site);
          if (!sources.includes(`bus0/1/${channel}`)) throw new Error("the daemon's canary has not arrived");
        },
        timeoutMs,
        500,
      );
    },
    async stop() {
      if (daemon.child.exitCode === null && daemon.child.signalCode === null) {
        daemon.signal("SIGCONT");
        await daemon.kill();
      }
      await site.stop();
      await mosquitto.stop();
    },
  };
}

export type DaemonSite = Awaited<ReturnType<typeof startDaemonSite>>;

/** Every hardware event source the cloud has applied from any gateway. */
async function reportedSources(site: Site): Promise<string[]> {
  const reports = hardwareReportRepository(site.db);
  const out: string[] = [];
  for (const gw of await gatewayRepository(site.db).allIds())
    for (const e of await reports.eventsOf(gw)) out.push(e.source);
  return out;
}

function spawnDaemon(configFile: string, stateDir: string, env: Record<string, string>): Daemon {
  const lines: Record<string, unknown>[] = [];
  const start = () => {
    const c = spawn(
      process.execPath,
      ["--import", "tsx", path.join(root, "gateway/main.ts"), "--config", configFile],
      { cwd: root, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "inherit"] },
    );
    createInterface({ input: c.stdout as NodeJS.ReadableStream }).on("line", (line) => {
      if (process.env.GW_LOG) process.stdout.write(`${line}\n`);
      try {
        lines.push(JSON.parse(line) as Record<string, unknown>);
      } catch {
        // not a log line
      }
      if (lines.length > 5000) lines.shift();
    });
    return c;
  };
  let child = start();
  const exited = (c: ChildProcess) =>
    new Promise<number | NodeJS.Signals | null>((resolve) => {
      if (c.exitCode !== null || c.signalCode !== null) resolve(c.exitCode ?? c.signalCode);
      else c.once("exit", (code, sig) => resolve(code ?? sig));
    });
  const store = () =>
    new Database(path.join(stateDir, "gateway.db"), { readonly: true, fileMustExist: true });
  return {
    get child() {
      return child;
    },
    stateDir,
    configFile,
    signal: (sig) => {
      child.kill(sig);
    },
    async kill() {
      const gone = exited(child);
      child.kill("SIGKILL");
      await gone;
    },
    restart() {
      if (child.exitCode === null && child.signalCode === null)
        throw new Error("the daemon is still running");
      child = start();
    },
    exited: () => exited(child),
    outbox() {
      const db = store();
      try {
        const rows = db.prepare("SELECT seq, type, body FROM outbox ORDER BY seq").all() as {
          seq: number;
          type: string;
          body: string;
        }[];
        return rows.map((r) => {
          const body = JSON.parse(r.body) as Record<string, unknown>;
          return { seq: r.seq, type: r.type, source: body.source as string | undefined, body };
        });
      } finally {
        db.close();
      }
    },
    logged: (msg) => lines.filter((l) => l.msg === msg),
    quickCheck() {
      const db = store();
      try {
        return String(db.pragma("quick_check", { simple: true }));
      } finally {
        db.close();
      }
    },
    lastSeq() {
      const db = store();
      try {
        const row = db.prepare("SELECT seq FROM sqlite_sequence WHERE name = 'outbox'").get() as
          | { seq: number }
          | undefined;
        return row?.seq ?? 0;
      } finally {
        db.close();
      }
    },
    outboxId() {
      const db = store();
      try {
        return (db.prepare("SELECT outbox_id FROM outbox_identity").get() as { outbox_id: string }).outbox_id;
      } finally {
        db.close();
      }
    },
    control: <T>(method: string, params: Record<string, unknown> = {}) =>
      callControl(path.join(stateDir, "control.sock"), method, params) as Promise<T>,
  };
}
