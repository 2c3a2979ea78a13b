/**
 * The simulated fleet, a process of its own (started by bench/fleet.ts with an IPC channel): N gateways,
 * each its own MQTT client, connected at a bounded rate; heartbeats every 10 s spread evenly over the
 * period; door events at a steady rate; commands answered at once. It tells the runner when it published
 * a probe heartbeat, and answers `stats` with what the fleet counted.
 */
import { monitorEventLoopDelay } from "node:perf_hooks";
import pino from "pino";
import { systemClock } from "../../shared/node/system-clock.ts";
import * as wire from "../../shared/wire/messages.ts";
import { FLEET_SECRET, gatewayId } from "./fleet-shape.ts";
import type { FromFleet, SimConfig, ToFleet } from "./ipc.ts";
import { type FleetCounters, SimGateway } from "./sim-gateway.ts";

const HEARTBEAT_MS = 10_000;
const TICK_MS = 20;
/** Connections begun and not yet up: beyond this the ramp waits, so the broker's backlog never overflows. */
const MAX_CONNECTING = 200;

const cfg = JSON.parse(process.env.FLEET_SIM ?? "{}") as SimConfig;
const send = (m: FromFleet) => process.send?.(m);

// Warnings are counted, the first few kept: thousands of gateways must not flood the runner's terminal.
const warnings = { count: 0, first: [] as string[] };
const log = pino(
  { level: "warn" },
  {
    write(line: string) {
      warnings.count++;
      if (warnings.first.length < 3) warnings.first.push(line.trim().slice(0, 300));
    },
  },
);

// The wire's optional outbox identity, sent where the schema knows it (the cloud never requires it).
const outboxIdKnown = "outbox_id" in (wire.CommandProgress.shape as Record<string, unknown>);

const counters: FleetCounters = { heartbeats: 0, commands: 0, upPublished: 0, disconnects: 0 };
const fleet: SimGateway[] = [];
const delay = monitorEventLoopDelay({ resolution: 5 });
delay.enable();

function startNext(): void {
  const i = fleet.length;
  const gw = new SimGateway(gatewayId(i), {
    url: cfg.brokerUrl,
    prefix: cfg.prefix,
    password: FLEET_SECRET,
    clock: systemClock,
    log,
    counters,
    outboxId: outboxIdKnown ? crypto.randomUUID() : null,
  });
  fleet.push(gw);
  gw.start();
}

function pendingUp(): { pending: number; oldestMs: number } {
  let pending = 0;
  let oldest: string | null = null;
  for (const gw of fleet) {
    const s = gw.outbox.stats();
    pending += s.pending;
    if (s.oldest && (oldest === null || s.oldest < oldest)) oldest = s.oldest;
  }
  return { pending, oldestMs: oldest ? Date.now() - Date.parse(oldest) : 0 };
}

const t0 = Date.now();
/** Gateways 0 … upPrefix−1 have been ready with every first report acknowledged (once up, counted up). */
let upPrefix = 0;
let beats = 0;
let rampCredit = 0;
let eventCredit = 0;
let last = t0;
let pendingNow = 0;

const ticker = setInterval(() => {
  const now = Date.now();
  const dt = now - last;
  last = now;
  // Ramp: at most connectRate new connections a second, fewer while connects or startup reports pile up.
  if (fleet.length < cfg.gateways) {
    rampCredit = Math.min(rampCredit + (cfg.connectRate * dt) / 1000, cfg.connectRate);
    let connecting = fleet.filter((g) => !g.everConnected).length;
    while (
      rampCredit >= 1 &&
      fleet.length < cfg.gateways &&
      connecting < MAX_CONNECTING &&
      pendingNow < cfg.maxPendingUp
    ) {
      startNext();
      rampCredit--;
      connecting++;
    }
  }
  // Gateway i beats at t0 + (k·N + i)·(10 s / N): every gateway once per period, evenly spread.
  const due = Math.floor(((now - t0) * cfg.gateways) / HEARTBEAT_MS);
  for (; beats < due; beats++) {
    const i = beats % cfg.gateways;
    const gw = fleet[i];
    if (!gw) continue;
    const at = Date.now();
    if (gw.heartbeat(counters) && i % cfg.probeEvery === 0) send({ kind: "probe", gateway: i, at });
  }
  // Door events at eventsPerHour per gateway, on gateways drawn at random (none on one not yet ready).
  eventCredit += (fleet.length * cfg.eventsPerHour * dt) / 3_600_000;
  for (; eventCredit >= 1; eventCredit--) {
    const gw = fleet[Math.floor(Math.random() * fleet.length)];
    if (gw?.ready) gw.doorEvent();
  }
}, TICK_MS);

// The outbox sum walks every gateway: once a second is plenty for the ramp's brake.
const pendingWatch = setInterval(() => {
  pendingNow = pendingUp().pending;
}, 1_000);

process.on("message", (m: ToFleet) => {
  if (m.kind === "stop") {
    clearInterval(ticker);
    clearInterval(pendingWatch);
    // The broker and the cloud go down with the run; a graceful MQTT goodbye of thousands is not measured.
    process.exit(0);
  }
  if (m.kind === "stats") {
    const { pending, oldestMs } = pendingUp();
    let connected = 0;
    let ready = 0;
    let appended = 0;
    while (upPrefix < fleet.length) {
      const gw = fleet[upPrefix] as SimGateway;
      if (!gw.ready || gw.outbox.stats().pending > 0) break;
      upPrefix++;
    }
    for (const gw of fleet) {
      if (gw.link.connected) connected++;
      if (gw.ready) ready++;
      appended += gw.outbox.appended;
    }
    send({
      kind: "stats",
      started: fleet.length,
      connected,
      ready,
      upPrefix,
      pendingUp: pending,
      oldestPendingMs: oldestMs,
      upAppended: appended,
      ...counters,
      loopDelayP99Ms: delay.percentile(99) / 1e6,
      loopDelayMaxMs: delay.max / 1e6,
      warnings: warnings.count,
      firstWarnings: warnings.first,
      outboxId: outboxIdKnown,
    });
    if (m.resetDelay) delay.reset();
  }
});
process.on("SIGTERM", () => process.exit(0));
// The runner gone (killed by its time box): nothing of the fleet may outlive it.
process.on("disconnect", () => process.exit(0));
