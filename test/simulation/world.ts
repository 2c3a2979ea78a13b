import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { Duplex } from "node:stream";
import type { FastifyInstance } from "fastify";
import pino from "pino";
import { buildApp } from "../../cloud/app.ts";
import { createTokenIssuer } from "../../cloud/auth/tokens.ts";
import { createSettledNotifier } from "../../cloud/commands/command-settled.ts";
import { createDeadlineSweeper } from "../../cloud/commands/deadline-sweeper.ts";
import { DEFAULT_COMMAND_TIMEOUTS } from "../../cloud/devices/timeouts.ts";
import { type EmbeddedBroker, startEmbeddedBroker } from "../../cloud/gateway-link/embedded-broker.ts";
import { type GatewayLink, startGatewayLink } from "../../cloud/gateway-link/gateway-link.ts";
import { openDb } from "../../cloud/store/db.ts";
import { startWebhookDelivery } from "../../cloud/webhooks/webhook-delivery.ts";
import { parseGatewayConfig } from "../../gateway/config.ts";
import { type RunningGateway, startGateway } from "../../gateway/gateway.ts";
import type { GpioBank } from "../../gateway/ports.ts";
import { createSimSite, type SimSite } from "../../hardware-sim/site.ts";
import { systemClock } from "../../shared/node/system-clock.ts";
import { OffsetClock } from "../support/offset-clock.ts";
import { SCRATCH } from "./scratch.ts";
import { SimNetwork } from "./sim-network.ts";
import {
  DOOR_READER,
  DOOR_WATCH_S,
  doorAlias,
  gatewayIds,
  HELD_OPEN_S,
  LOCKERS,
  READERS,
  SECRET,
  siteStoreFile,
  WEBHOOK_SECRET,
} from "./sim-site.ts";
import { createSimReceiver } from "./webhook-receiver.ts";

const PREFIX = "sim";
const BROKER_PORT = 1883;
const CLOUD_MQTT = { username: "cloud", password: "cloud-simulation-password" };
const TOKEN_SECRET = new TextEncoder().encode("simulation-token-secret-of-32-bytes!!");
const ISSUER = "http://cloud.sim";
const MOVE_MS = 20;

/** One site controller: its hardware (which outlives the daemon), its clock and its daemon, if running. */
export type SimGateway = {
  id: string;
  hardware: SimSite;
  /** The controller's wall clock: jumps as a host's clock is set. */
  clock: OffsetClock;
  daemon: RunningGateway | null;
};

/**
 * The whole system in this process (FoundationDB-style): the cloud on a SQLite file, its embedded broker,
 * and gateways on simulated hardware, all on the virtual clock and the in-memory network. Nothing here
 * decides anything at random: the run's driver does, from its seed.
 */
export async function startWorld(opts: {
  gateways: number;
  /** Called with every daemon started, the first boots and every restart. */
  onBoot?: (g: SimGateway, daemon: RunningGateway) => void;
}) {
  const log = pino({ level: process.env.SIM_LOG ?? "silent" }, pino.destination(2));
  const net = new SimNetwork();
  net.install();
  const store = await siteStoreFile(opts.gateways);
  const db = await openDb({ kind: "sqlite", file: store.file });
  const clock = systemClock;
  const timeouts = DEFAULT_COMMAND_TIMEOUTS;
  let broker: EmbeddedBroker | null = null;
  /** `kept`: the restarted broker starts with what the last one kept (sessions, queues, retained messages). */
  const startBroker = async (kept: unknown = undefined) => {
    broker = await startEmbeddedBroker({
      db,
      log,
      port: BROKER_PORT,
      prefix: PREFIX,
      cloud: CLOUD_MQTT,
      clock,
      persistence: kept,
    });
  };
  await startBroker();
  const settled = createSettledNotifier();
  const link: GatewayLink = await startGatewayLink(
    {
      brokerUrl: `mqtt://cloud.sim:${BROKER_PORT}`,
      ...CLOUD_MQTT,
      clientId: CLOUD_MQTT.username,
      prefix: PREFIX,
    },
    { db, clock, log, timeouts, settled },
  );
  const app: FastifyInstance = await buildApp({
    db,
    clock,
    log,
    gateways: link,
    tokenSecret: TOKEN_SECRET,
    issuer: ISSUER,
    timeouts,
    settled,
  });
  const sweeper = createDeadlineSweeper({ db, clock, timeouts, log, everyMs: 500, settled });
  sweeper.start();
  // The operator's receiver, and the delivery worker that sends it every site event.
  const hooks = createSimReceiver(WEBHOOK_SECRET, () => clock.now().getTime());
  const delivery = startWebhookDelivery({ db, clock, log, sender: hooks.sender });

  const dir = mkdtempSync(path.join(SCRATCH, "parking-sim-gw-"));
  const gateways = new Map<string, SimGateway>();
  for (const id of gatewayIds(opts.gateways)) {
    const hardware = createSimSite({
      moveMs: MOVE_MS,
      buses: { bus0: { boards: [{ address: 1, channels: LOCKERS, latch: "unlocked" }] } },
      readers: Object.fromEntries([...readerIds(), DOOR_READER].map((r) => [r, { aliveMs: false as const }])),
      doors: [doorAlias(id)],
    });
    await hardware.ready;
    gateways.set(id, { id, hardware, clock: new OffsetClock(), daemon: null });
  }

  const configOf = (id: string) =>
    parseGatewayConfig({
      gateway_id: id,
      secret: SECRET,
      broker: { url: `mqtt://${id}.sim:${BROKER_PORT}`, prefix: PREFIX },
      state_dir: path.join(dir, id),
      buses: [{ name: "bus0", path: "sim://bus0", boards: [1] }],
      readers: [
        ...readerIds().map((r, i) => ({ id: r, path: `sim://${r}`, device_alias: `${id}-${i + 1}` })),
        { id: DOOR_READER, path: `sim://${DOOR_READER}`, device_alias: doorAlias(id) },
      ],
      door_held_open_s: HELD_OPEN_S,
      door_watch_s: DOOR_WATCH_S,
      heartbeat_interval_s: 5,
      sensor_sweep: null,
      outbox_resend_s: 2,
      log_level: (process.env.SIM_LOG ?? "silent") as "silent",
    });

  /** Ends, as a process's death does, the serial links of each gateway's running daemon. */
  const severs = new Map<SimGateway, () => void>();
  async function bootGateway(g: SimGateway): Promise<void> {
    const links: Duplex[] = [];
    let dead = false;
    severs.set(g, () => {
      dead = true;
      for (const l of links) l.destroy();
    });
    g.daemon = await startGateway({
      config: configOf(g.id),
      secret: SECRET,
      clock: g.clock,
      monotonic: g.clock,
      gpio: gpioOf(g.hardware, () => dead),
      log,
      async openLink(p) {
        if (dead) throw Object.assign(new Error(`${p}: no such device`), { code: "ENOENT" });
        const link = await g.hardware.linkFactory(p);
        links.push(link);
        return link;
      },
      camera: null,
      controlSocket: false,
    });
    opts.onBoot?.(g, g.daemon);
  }
  for (const g of gateways.values()) await bootGateway(g);

  return {
    app,
    db,
    /** Mints a rider's access token as sign-in does (the sign-in round trip itself is not what runs here). */
    riderTokens: createTokenIssuer({ secret: TOKEN_SECRET, issuer: ISSUER, clock }),
    net,
    gateways,
    /** The operator's webhook receiver. */
    hooks,
    /** The cloud's SQLite store. */
    cloudStoreFile: store.file,
    /** The gateway's own SQLite store (its outbox, key cache, journals). */
    storeFile: (g: SimGateway) => path.join(dir, g.id, "gateway.db"),
    /** The broker restarts, keeping what it held (as Mosquitto with `persistence true`) or losing it all. */
    async brokerRestart(keep: boolean): Promise<void> {
      const kept = keep ? broker?.persistence : undefined;
      await broker?.close();
      await startBroker(kept);
    },
    /** Stops a gateway's daemon (its hardware and files stay) and starts it again from its files. */
    async restartGateway(g: SimGateway): Promise<void> {
      await g.daemon?.stop();
      g.daemon = null;
      await bootGateway(g);
    },
    /**
     * Kills a gateway's daemon at whatever it was awaiting, and starts another from its files: what its
     * store had committed at that instant is what the next one finds, and nothing it does after the
     * instant reaches anyone (its broker link is held, then cut; its serial links end, as a dead
     * process's do). Its hardware goes on with what it was asked before.
     */
    async killGateway(g: SimGateway): Promise<void> {
      net.partition(g.id, true);
      const store = path.join(dir, g.id, "gateway.db");
      const files = [store, `${store}-wal`].map((f) => ({
        f,
        bytes: existsSync(f) ? readFileSync(f) : null,
      }));
      severs.get(g)?.();
      net.cut(g.id);
      await g.daemon?.stop();
      g.daemon = null;
      net.cut(g.id);
      rmSync(`${store}-shm`, { force: true });
      for (const { f, bytes } of files) {
        if (bytes) writeFileSync(f, bytes);
        else rmSync(f, { force: true });
      }
      net.partition(g.id, false);
      await bootGateway(g);
    },
    async stop(): Promise<void> {
      sweeper.stop();
      await delivery.stop();
      for (const g of gateways.values()) {
        await g.daemon?.stop();
        await g.hardware.close();
      }
      await app.close();
      await link.close();
      await broker?.close();
      await db.destroy();
      net.uninstall();
      store.remove();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The site's GPIO as one daemon drives it: what a dead process writes reaches nothing (lines keep their level). */
function gpioOf(hardware: SimSite, dead: () => boolean): GpioBank {
  return {
    line(name) {
      const line = hardware.gpio.line(name);
      return {
        ...line,
        write: (value) => {
          if (!dead()) line.write(value);
        },
      };
    },
    close: () => hardware.gpio.close(),
  };
}

/** reader-N serves locker N. */
export const readerIds = () => Array.from({ length: READERS }, (_, i) => `reader-${i + 1}`);

export type World = Awaited<ReturnType<typeof startWorld>>;
