/**
 * Access at the edge, on the gateway daemon alone (in-process, in-memory simulator, broker away):
 *  - a full 100,000-card key snapshot applied (1,000-grant parts, each parsed and validated as the broker
 *    link does), and a one-card lookup;
 *  - tap → actuation latency with those 100,000 cards in the cache: a card line on the door's reader until
 *    the lock board receives UNLOCK, p50/p99, beside the serial wire time of the two frames involved. The
 *    simulator's in-memory cables deliver at once (no wire time), so the wire time is computed from the
 *    frames' bytes at their configured baud rates (8N1: 10 bits a byte) and the ratio is printed.
 *   npm run bench:taps            (TAPS=2000 by default; BENCH_TIMEOUT_S=300, see time-box.ts)
 */
import { EventEmitter } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import pino from "pino";
import { parseGatewayConfig } from "../gateway/config.ts";
import { startGateway } from "../gateway/gateway.ts";
import type { BrokerLink, BrokerLinkEvents } from "../gateway/ports.ts";
import { createSimSite } from "../hardware-sim/site.ts";
import { systemClock } from "../shared/node/system-clock.ts";
import { BAUD_RATE } from "../shared/protocol/lock-bus/constants.ts";
import { encodeFrame } from "../shared/protocol/lock-bus/frame.ts";
import { hostRequestFrame } from "../shared/protocol/lock-bus/messages.ts";
import { READER_BAUD_RATE, readerLine } from "../shared/protocol/rfid-reader/reader-line.ts";
import { compiledOnUse } from "../shared/wire/compiled.ts";
import { type AccessDecision, type Grant, KeysDown, SNAPSHOT_PART_SIZE } from "../shared/wire/messages.ts";
import { printRuntime } from "./runtime.ts";
import { timeBox } from "./time-box.ts";

printRuntime();

const CARDS = 100_000;
const TAPS = Number(process.env.TAPS ?? 2_000);
const GW = "gw-bench-taps";
const LOCATION = "10000000-0000-4000-8000-000000000001";
const DOOR = "20000000-0000-4000-8000-0000000000d0";
const WHITELIST = "30000000-0000-4000-8000-00000000000a";
const HOLD_S = 10;

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] as number;
};
const ms = (x: number) => `${x.toFixed(2)} ms`;
/** 7-byte UIDs as MIFARE cards carry them: 14 hex digits. */
const card = (n: number) => `04${n.toString(16).padStart(12, "0")}`;

/** The broker is away for the whole bench: everything is decided locally, nothing is published. */
class AwayBrokerLink extends EventEmitter<BrokerLinkEvents> implements BrokerLink {
  readonly connected = false;
  readonly connectedSince = null;
  start(): void {}
  stop(): Promise<void> {
    return Promise.resolve();
  }
  publishUp(): Promise<void> {
    return Promise.reject(new Error("broker away"));
  }
  publishHeartbeat(): boolean {
    return false;
  }
  publishKeysReport(): boolean {
    return false;
  }
}

const box = timeBox("bench:taps");
box.step("starting the gateway");
const dir = mkdtempSync(path.join(tmpdir(), "parking-bench-taps-"));
const sim = createSimSite({
  moveMs: 0,
  buses: { bus0: { boards: [{ address: 1, channels: 1, doors: [1] }] } },
  readers: { "reader-door": { aliveMs: false } },
});
const link = new AwayBrokerLink();
const gateway = await startGateway({
  config: parseGatewayConfig({
    gateway_id: GW,
    secret: "bench-taps-secret",
    broker: { url: "mqtt://127.0.0.1:1", prefix: "bench" },
    state_dir: path.join(dir, "state"),
    buses: [{ name: "bus0", path: "sim://bus0", boards: [1] }],
    readers: [{ id: "reader-door", path: "sim://reader-door", device_alias: "north" }],
    door_release_s: HOLD_S,
    sensor_sweep: null,
    key_sweep: null,
    log_level: "silent",
  }),
  secret: "bench-taps-secret",
  clock: systemClock,
  log: pino({ level: "silent" }),
  openLink: (p) => sim.linkFactory(p),
  gpio: sim.gpio,
  brokerLink: () => link,
  controlSocket: false,
});

try {
  link.emit("deviceMap", {
    gateway_id: GW,
    version: "bench",
    location: { id: LOCATION, rfid_parking: false },
    devices: [
      {
        device_id: DOOR,
        type: "BIKE_HOUSE_DOOR",
        alias: "north",
        bus: { board: 1, channel: 1 },
        has_camera: false,
      },
    ],
  });

  // ── The snapshot: 100 parts of 1,000 grants, as they arrive on the wire ─────────────────────────────
  const grants: Grant[] = Array.from({ length: CARDS }, (_, i) => ({
    card_id: card(i),
    whitelist_id: WHITELIST,
    status: "ACTIVE",
    expires_at: i % 4 === 0 ? "2099-01-01T00:00:00.000Z" : null,
    is_master_key: false,
    location_ids: [LOCATION],
    device_ids: [],
  }));
  const parts = Math.ceil(CARDS / SNAPSHOT_PART_SIZE);
  const payloads = Array.from({ length: parts }, (_, i) =>
    JSON.stringify({
      kind: "snapshot",
      gateway_id: GW,
      version: 1,
      part: i + 1,
      parts,
      grants: grants.slice(i * SNAPSHOT_PART_SIZE, (i + 1) * SNAPSHOT_PART_SIZE),
    }),
  );
  box.step(`applying a snapshot of ${CARDS} cards`);
  const t0 = performance.now();
  for (const p of payloads) link.emit("keys", compiledOnUse(KeysDown).parse(JSON.parse(p)));
  const snapshotMs = performance.now() - t0;
  const status = await gateway.control.status();
  if (status.keys.grants !== CARDS) throw new Error(`snapshot not applied: ${JSON.stringify(status.keys)}`);

  // ── Taps on the door's reader ─────────────────────────────────────────────────────────────────────────
  const board = sim.board("bus0", 1);
  const reader = sim.reader("reader-door");
  let decided: AccessDecision | null = null;
  let onDecided = () => {};
  gateway.onAccess((d) => {
    decided = d;
    onDecided();
  });
  const tapOnce = async (c: string): Promise<{ actuation: number; decision: number }> => {
    decided = null;
    const unlocked = new Promise<number>((resolve) => {
      const off = board.onRequest((req) => {
        if (req.kind !== "unlock") return;
        off();
        resolve(performance.now());
      });
    });
    const recorded = new Promise<number>((resolve) => {
      onDecided = () => resolve(performance.now());
    });
    const start = performance.now();
    reader.tap(c);
    const [atUnlock, atDecision] = await Promise.all([unlocked, recorded]);
    const d = decided as AccessDecision | null;
    if (!d?.granted || d.actuated !== true) throw new Error(`tap not granted: ${JSON.stringify(d)}`);
    return { actuation: atUnlock - start, decision: atDecision - start };
  };
  box.step(`tapping ${TAPS} cards`);
  for (let i = 0; i < 50; i++) await tapOnce(card((i * 7919) % CARDS)); // warm-up
  const actuation: number[] = [];
  const recorded: number[] = [];
  for (let i = 0; i < TAPS; i++) {
    const r = await tapOnce(card(Math.floor(Math.random() * CARDS)));
    actuation.push(r.actuation);
    recorded.push(r.decision);
  }

  // ── Wire time of the frames between the tap and the actuation ────────────────────────────────────────
  const tagBytes = Buffer.byteLength(readerLine({ kind: "tap", card: card(0) }));
  const unlockBytes = encodeFrame(
    hostRequestFrame({ kind: "unlock", addr: 1, seq: 1, channel: 1, holdS: HOLD_S }),
  ).length;
  const wire = (bytes: number, baud: number) => (bytes * 10 * 1000) / baud;
  const wireMs = wire(tagBytes, READER_BAUD_RATE) + wire(unlockBytes, BAUD_RATE);
  const p50 = pct(actuation, 50);
  const p99 = pct(actuation, 99);

  console.log(`Access at the edge: ${CARDS.toLocaleString("en")} cards in the key cache, broker away`);
  console.log(
    `  snapshot    ${CARDS.toLocaleString("en")} grants in ${parts} parts applied in ${ms(snapshotMs)} (parse + validate + SQLite)`,
  );
  console.log(`  tap → unlock request at the board (${TAPS} taps, in-memory serial: no wire time)`);
  console.log(`              p50 ${ms(p50)}   p99 ${ms(p99)}   max ${ms(Math.max(...actuation))}`);
  console.log(`  tap → decision in the outbox   p50 ${ms(pct(recorded, 50))}   p99 ${ms(pct(recorded, 99))}`);
  console.log(
    `  wire time   ${ms(wireMs)} = TAG line ${tagBytes} B at ${READER_BAUD_RATE} baud (${ms(wire(tagBytes, READER_BAUD_RATE))}) + UNLOCK frame ${unlockBytes} B at ${BAUD_RATE} baud (${ms(wire(unlockBytes, BAUD_RATE))})`,
  );
  console.log(
    `  ratio       gateway p99 is ${(p99 / wireMs).toFixed(3)}× the wire time; on a real line p99 ≈ ${ms(wireMs + p99)} = ${((wireMs + p99) / wireMs).toFixed(2)}× wire (target ≤ 2× wire + 2 ms = ${ms(2 * wireMs + 2)})`,
  );
} finally {
  box.step("stopping the gateway");
  await gateway.stop();
  await sim.close();
  rmSync(dir, { recursive: true, force: true });
}
box.finished();
