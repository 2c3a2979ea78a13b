/**
 * What the benchmarks share. A fixture process (bench/*-server(s).ts) fills a store, starts the real cloud
 * app and a bare Fastify route beside it, and announces their ports as one JSON line on stdout. A runner
 * starts that process, so the load generator does not share the servers' event loop, and measures the
 * service and the bare route with autocannon at 1 and 50 connections, printing them side by side.
 */
import { spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import autocannon from "autocannon";
import Fastify, { type FastifyInstance, type LightMyRequestResponse } from "fastify";
import pino from "pino";
import { type AppDeps, buildApp } from "../cloud/app.ts";
import { DEFAULT_COMMAND_TIMEOUTS } from "../cloud/devices/timeouts.ts";
import { applyManifest } from "../cloud/manifest/apply-manifest.ts";
import { type ManifestInput, SiteManifest } from "../cloud/manifest/manifest-schema.ts";
import { type Db, openDb } from "../cloud/store/db.ts";
import { systemClock } from "../shared/node/system-clock.ts";
import type { TimeBox } from "./time-box.ts";

// --- In a fixture process ---

/** A fresh SQLite store in a new temporary directory. */
export async function benchDb(prefix = "parking-bench-"): Promise<{ dir: string; db: Db }> {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  return { dir, db: await openDb({ kind: "sqlite", file: path.join(dir, "cloud.db") }) };
}

/** Applies a manifest that declares one operator. */
export async function declareOperator(db: Db, operator: ManifestInput["operators"][number]): Promise<void> {
  await applyManifest(db, SiteManifest.parse({ version: 1, operators: [operator] }), systemClock);
}

/** `count` lockers with aliases "1", "2", …, as a manifest declares a gateway's devices. */
export const lockers = (count: number) =>
  Array.from({ length: count }, (_, i) => ({ alias: String(i + 1), type: "LOCKER" as const }));

/** Listens on a free local port and answers it. */
export async function listen(server: FastifyInstance): Promise<number> {
  await server.listen({ host: "127.0.0.1", port: 0 });
  return (server.server.address() as AddressInfo).port;
}

/** The real cloud app on `db`, listening on a free local port; it publishes to no gateway unless given a link. */
export async function startCloud(
  db: Db,
  deps: Partial<AppDeps> = {},
): Promise<{ app: FastifyInstance; port: number }> {
  const app = await buildApp({
    db,
    clock: systemClock,
    log: pino({ level: "silent" }),
    gateways: {
      publishCommand: () => Promise.resolve(),
      ack: () => Promise.resolve(),
      keysChanged: () => {},
    },
    tokenSecret: new TextEncoder().encode("bench-token-secret-of-at-least-32-bytes"),
    issuer: "http://bench",
    timeouts: DEFAULT_COMMAND_TIMEOUTS,
    ...deps,
  });
  return { app, port: await listen(app) };
}

/** An access token for the S2S client `bench`, issued by POST /oauth2/token. */
export async function clientToken(app: FastifyInstance, secret = "bench-secret"): Promise<string> {
  const res = await app.inject({
    method: "POST",
    url: "/oauth2/token",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    payload: `grant_type=client_credentials&client_id=bench&client_secret=${secret}`,
  });
  return (res.json() as { access_token: string }).access_token;
}

/**
 * The cloud app on `db` and the floor beside it: a bare Fastify route that answers, at the same path, the
 * bytes the app answers the client `bench` for GET `url`. Answers both ports, the token and that answer.
 */
export async function serveListing(
  db: Db,
  url: string,
): Promise<{ api: number; bare: number; token: string; sample: LightMyRequestResponse }> {
  const { app, port } = await startCloud(db);
  const token = await clientToken(app);
  const sample = await app.inject({ method: "GET", url, headers: { authorization: `Bearer ${token}` } });
  // The floor sends prepared bytes: nothing a route could do to the same answer is cheaper.
  const bytes = sample.rawPayload;
  const bare = Fastify();
  bare.get(new URL(url, "http://bench").pathname, (_req, reply) =>
    reply.type("application/json; charset=utf-8").send(bytes),
  );
  return { api: port, bare: await listen(bare), token, sample };
}

/**
 * Tells the runner where the servers are (one JSON line), and exits when the runner stops it, or when
 * the runner is gone (its end of our stdin closes), so a runner killed by its time box leaves no server.
 */
export function announce(info: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify(info)}\n`);
  process.on("SIGTERM", () => process.exit(0));
  process.stdin.once("end", () => process.exit(0)).resume();
}

// --- In a runner ---

/** Seconds per measured run. */
export const DURATION = Number(process.env.DURATION ?? 10);

/**
 * Starts the fixture process `script`, runs `bench` with what it announced, then stops it and waits for
 * it to exit; the time box kills it if the bench runs out of time.
 */
export async function withFixture<Info>(
  box: TimeBox,
  script: string,
  bench: (info: Info) => Promise<void>,
): Promise<void> {
  const child = spawn(process.execPath, ["--import", "tsx", script], {
    stdio: ["pipe", "pipe", "inherit"],
  });
  box.own(child);
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  try {
    box.step(`starting ${script}`);
    const line = await Promise.race([
      new Promise<string>((resolve) => createInterface({ input: child.stdout }).once("line", resolve)),
      exited.then(() => Promise.reject(new Error(`${script} exited before announcing its servers`))),
    ]);
    await bench(JSON.parse(line) as Info);
  } finally {
    box.step(`stopping ${script}`);
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
    child.stdin?.end();
    await exited;
  }
}

export type Figures = { rps: number; p50: number; p99: number };
/** What autocannon loads, and how a failed run names it (its url unless told). */
export type Target = Omit<autocannon.Options, "connections" | "duration"> & {
  label?: string;
  /** The status every answer must have; any 2xx unless given. */
  status?: number;
};

/** Throughput and latency of one target: a short warm-up lets the JIT settle before the measured run. */
export async function measure(target: Target, connections: number, box?: TimeBox): Promise<Figures> {
  const { label = target.url, status, ...options } = target;
  box?.step(`measuring ${label} at ${connections} connection${connections > 1 ? "s" : ""}`);
  await autocannon({ ...options, connections, duration: 2 });
  const r = await autocannon({ ...options, connections, duration: DURATION });
  if (status !== undefined) {
    const other = Object.entries(r.statusCodeStats ?? {}).filter(
      ([code, s]) => Number(code) !== status && (s.count ?? 0) > 0,
    );
    if (other.length > 0 || r.errors > 0)
      throw new Error(`${label}: ${r.errors} errors, answers other than ${status}: ${JSON.stringify(other)}`);
  } else if (r.non2xx > 0 || r.errors > 0)
    throw new Error(`${label}: ${r.non2xx} non-2xx, ${r.errors} errors`);
  return { rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99 };
}

/** Measures the service, then the bare route, at 1 and 50 connections; prints each pair and their ratio. */
export async function compareWithBare(
  service: Target,
  bare: Target,
  heading = "",
  box?: TimeBox,
): Promise<void> {
  for (const connections of [1, 50]) {
    const api = await measure(service, connections, box);
    const floor = await measure(bare, connections, box);
    console.log(`\n${heading}${connections} connection${connections > 1 ? "s" : ""}`);
    console.log(
      `  service    ${api.rps.toFixed(0).padStart(7)} req/s   p50 ${api.p50} ms   p99 ${api.p99} ms`,
    );
    console.log(
      `  bare route ${floor.rps.toFixed(0).padStart(7)} req/s   p50 ${floor.p50} ms   p99 ${floor.p99} ms`,
    );
    console.log(
      `  ratio      throughput ${(api.rps / floor.rps).toFixed(2)}×   p99 ${(api.p99 / Math.max(floor.p99, 1)).toFixed(1)}× of the bare route`,
    );
  }
}
