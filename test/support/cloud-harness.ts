import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from "fastify";
import pino from "pino";
import { type AppDeps, buildApp } from "../../cloud/app.ts";
import { hashSecret } from "../../cloud/auth/secrets.ts";
import {
  createSettledNotifier,
  type InProcessSettledNotifier,
} from "../../cloud/commands/command-settled.ts";
import { createDeadlineSweeper } from "../../cloud/commands/deadline-sweeper.ts";
import { type CommandTimeoutConfig, DEFAULT_COMMAND_TIMEOUTS } from "../../cloud/devices/timeouts.ts";
import { applyUpMessage } from "../../cloud/gateway-link/apply-up-message.ts";
import { applyStatus } from "../../cloud/gateway-link/gateway-reports.ts";
import { createHeartbeatIntake } from "../../cloud/gateway-link/heartbeat-intake.ts";
import { applyManifest } from "../../cloud/manifest/apply-manifest.ts";
import { SiteManifest } from "../../cloud/manifest/manifest-schema.ts";
import type { GatewayPublisher } from "../../cloud/ports.ts";
import type { Db } from "../../cloud/store/db.ts";
import {
  type CommandRequest,
  type Heartbeat,
  type Status,
  UpMessage,
  type UpMessageInput,
} from "../../shared/wire/messages.ts";
import { FakeClock } from "./fake-clock.ts";
import { fixtureManifest, SECRET } from "./fixture-site.ts";
import { openTestDb, type TestDb } from "./test-db.ts";

let secretHash: Promise<string> | undefined;
/** scrypt is slow on purpose: hash the fixture secret once per worker. */
export const fixtureSecretHash = () => {
  // The least cost secrets.ts accepts: a fixture verified in every test need not be slow to guess.
  secretHash ??= hashSecret(SECRET, { ln: 10, r: 8, p: 1 });
  return secretHash;
};

/** A GatewayPublisher that records what the cloud sends; `mode` makes the broker hang or fail. */
export class RecordingGateways implements GatewayPublisher {
  commands: { gatewayId: string; request: CommandRequest }[] = [];
  acks: { gatewayId: string; seqs: number[] }[] = [];
  /** Gateways told their key sets changed, one entry per call. */
  keyChanges: string[][] = [];
  mode: "ok" | "hang" | "fail" = "ok";

  publishCommand(gatewayId: string, request: CommandRequest): Promise<void> {
    if (this.mode === "hang") return new Promise(() => {});
    if (this.mode === "fail") return Promise.reject(new Error("broker unreachable"));
    this.commands.push({ gatewayId, request });
    return Promise.resolve();
  }

  ack(gatewayId: string, seqs: number[]): Promise<void> {
    this.acks.push({ gatewayId, seqs });
    return Promise.resolve();
  }

  keysChanged(gatewayIds: string[]): void {
    this.keyChanges.push(gatewayIds);
  }

  last(): { gatewayId: string; request: CommandRequest } {
    const c = this.commands.at(-1);
    if (!c) throw new Error("no command was published");
    return c;
  }
}

export type CloudHarness = {
  app: FastifyInstance;
  db: Db;
  store: TestDb;
  clock: FakeClock;
  gateways: RecordingGateways;
  timeouts: CommandTimeoutConfig;
  /** This "process's" command-ended notices: the app, the sweep and `report` share it. */
  settled: InProcessSettledNotifier;
  /** Runs one deadline sweep at the fake clock's now. */
  sweep(): Promise<number>;
  /** A bearer token for a fixture client, fetched through POST /oauth2/token. */
  token(clientId: string): Promise<string>;
  /** A token issued at the fake clock's now, not cached: a cached one expires an hour of the clock later. */
  freshToken(clientId: string): Promise<string>;
  /** app.inject with a bearer token for `as` (a fixture client id), unless `as` is null. */
  call(as: string | null, opts: InjectOptions): Promise<LightMyRequestResponse>;
  /** Plays the gateway: applies an outbox message as if it had arrived over MQTT. */
  report(gatewayId: string, msg: UpMessageInput): Promise<"applied" | "duplicate">;
  heartbeat(hb: Heartbeat): Promise<void>;
  status(st: Status): Promise<void>;
  close(): Promise<void>;
};

export const TOKEN_SECRET = new TextEncoder().encode("test-token-secret-of-at-least-32-bytes!!");
export const ISSUER = "http://cloud.test";

/** The cloud app on a fresh store with the fixture site applied, a fake clock and a recording gateway link. */
export async function startCloudHarness(
  opts: {
    timeouts?: Partial<CommandTimeoutConfig>;
    requestTimeoutMs?: number;
    externalUsers?: AppDeps["externalUsers"];
    whitelists?: AppDeps["whitelists"];
    idempotency?: AppDeps["idempotency"];
    commandWaitPollMs?: number;
    console?: AppDeps["console"];
    /** The store to use, e.g. one another harness (replica) uses too; its own fresh one by default. */
    store?: TestDb;
    /** The clock to use, e.g. one shared with another harness; a new FakeClock by default. */
    clock?: FakeClock;
  } = {},
): Promise<CloudHarness> {
  const store = opts.store ?? (await openTestDb());
  const db = store.db;
  const clock = opts.clock ?? new FakeClock();
  const log = pino({ level: process.env.TEST_LOG_LEVEL ?? "silent" });
  const gateways = new RecordingGateways();
  const timeouts = { ...DEFAULT_COMMAND_TIMEOUTS, ...opts.timeouts };
  const settled = createSettledNotifier();
  const heartbeats = createHeartbeatIntake(db);
  await applyManifest(db, SiteManifest.parse(fixtureManifest(await fixtureSecretHash())), clock);
  const app = await buildApp({
    db,
    clock,
    log,
    gateways,
    tokenSecret: TOKEN_SECRET,
    issuer: ISSUER,
    timeouts,
    requestTimeoutMs: opts.requestTimeoutMs,
    externalUsers: opts.externalUsers,
    whitelists: opts.whitelists,
    idempotency: opts.idempotency,
    settled,
    commandWaitPollMs: opts.commandWaitPollMs,
    console: opts.console,
  });
  await app.ready();
  const sweeper = createDeadlineSweeper({ db, clock, timeouts, log, settled });
  const tokens = new Map<string, string>();

  const h: CloudHarness = {
    app,
    db,
    store,
    clock,
    gateways,
    timeouts,
    settled,
    sweep: () => sweeper.sweep(),
    async token(clientId) {
      const cached = tokens.get(clientId);
      if (cached) return cached;
      const token = await h.freshToken(clientId);
      tokens.set(clientId, token);
      return token;
    },
    async freshToken(clientId) {
      const res = await app.inject({
        method: "POST",
        url: "/oauth2/token",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        payload: new URLSearchParams({
          grant_type: "client_credentials",
          client_id: clientId,
          client_secret: SECRET,
        }).toString(),
      });
      if (res.statusCode !== 200) throw new Error(`token for ${clientId}: ${res.statusCode} ${res.body}`);
      return (res.json() as { access_token: string }).access_token;
    },
    async call(as, o) {
      const headers = { ...(o.headers ?? {}) } as Record<string, string>;
      if (as) headers.authorization = `Bearer ${await h.token(as)}`;
      return app.inject({ ...o, headers });
    },
    // Parsed like the gateway link parses what arrives over MQTT (defaults filled in).
    report: (gatewayId, msg) =>
      applyUpMessage(db, gatewayId, UpMessage.parse(msg), { now: clock.now(), timeouts, log, settled }),
    heartbeat: (hb) => heartbeats.apply(hb, clock.now()),
    status: async (st) => {
      await applyStatus(db, st, clock.now());
    },
    async close() {
      await app.close();
      await store.drop();
    },
  };
  return h;
}
