import path from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hardwareReportRepository } from "../../cloud/gateway-link/hardware-report-repository.ts";
import { accessEventRepository } from "../../cloud/key-sync/access-event-repository.ts";
import { keySyncRepository } from "../../cloud/key-sync/key-sync-repository.ts";
import type { ManifestInput } from "../../cloud/manifest/manifest-schema.ts";
import { fx } from "../support/fixture-site.ts";
import { type DaemonSite, type OutboxRow, startDaemonSite } from "./support/daemon.ts";
import { type NotifySocket, startNotifySocket } from "./support/notify-socket.ts";

// kill -9 at seeded random moments while door events, taps and the cloud's commands flow: after each, the
// store checks ok and what waits in the outbox is one contiguous run of seqs; at the end every event the
// daemon committed has reached the cloud exactly once, and nothing moved without a committed decision.
// FAULT_KILL_ITERATIONS (CI: the default, ~1 min) and FAULT_KILL_SEED choose the run.
const ITERATIONS = Number(process.env.FAULT_KILL_ITERATIONS ?? 40);
const SEED = Number(process.env.FAULT_KILL_SEED ?? 23);
const WL = "c1119999-0000-4000-8000-000000000001";
const MEMBER = "04a1b2c3d4";
/** Lockers the cloud's commands move (board 1 channels; 3 carries door events, 6 is the door). */
const LOCKERS = [1, 2, 4, 5].map((ch) => ({ ch, id: fx.device("L1", String(ch)) }));
const DOOR = fx.device("L1", "door");

/** mulberry32: a small seeded PRNG, so a failing run can be replayed. */
function prng(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function manifest(m: ManifestInput) {
  const op = m.operators[0];
  const l1 = op?.locations?.[0];
  if (!op || !l1) throw new Error("the fixture's first location is L1");
  l1.gateways?.[0]?.devices?.push({ alias: "door", type: "BIKE_HOUSE_DOOR", bus: { board: 1, channel: 6 } });
  op.whitelists = [{ id: WL, name: "Members", targets: [{ location: "L1" }], entities: [{ id: MEMBER }] }];
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe(`kill -9 at random moments (${ITERATIONS} iterations, seed ${SEED})`, () => {
  let s: DaemonSite;
  let notify: NotifySocket;
  beforeAll(async () => {
    notify = await startNotifySocket();
    s = await startDaemonSite({
      store: "postgres",
      doors: [6],
      readers: { "reader-door": "door" },
      manifest,
      env: { NOTIFY_SOCKET: notify.path },
    });
  });
  afterAll(async () => {
    await s?.stop();
    notify?.close();
  });

  const board = () => s.site.sim.board("bus0", 1);
  const moves = (ch: number, kinds: string[]) =>
    board().received.filter((r) => "channel" in r && r.channel === ch && kinds.includes(r.kind)).length;

  /** Door events, taps and lock/unlock commands at seeded random moments until `stop()`. */
  function traffic(rand: () => number) {
    let running = true;
    const counts = { events: 0, taps: 0, commands: 0, refusedByStatus: {} as Record<string, number> };
    const done = (async () => {
      let open = false;
      const locked = new Set<string>();
      while (running) {
        const r = rand();
        if (r < 0.5) {
          open = !open;
          board().event(3, open ? "door_opened" : "door_closed");
          counts.events++;
        } else if (r < 0.8) {
          s.site.sim.reader("reader-door").tap(MEMBER);
          counts.taps++;
        } else {
          const locker = LOCKERS[Math.floor(rand() * LOCKERS.length)] as (typeof LOCKERS)[number];
          const command = locked.has(locker.id) ? "unlock" : "lock";
          const res = await s.site.api("POST", `/device/v1/devices/${locker.id}/commands`, { command });
          if (res.statusCode === 200) {
            counts.commands++;
            if (command === "lock") locked.add(locker.id);
            else locked.delete(locker.id);
          } else counts.refusedByStatus[res.statusCode] = (counts.refusedByStatus[res.statusCode] ?? 0) + 1;
        }
        await sleep(20 + rand() * 150);
      }
    })();
    return {
      counts,
      async stop() {
        running = false;
        await done;
      },
    };
  }

  /** Asserts the store after a kill; returns the rows it holds (committed, not yet confirmed). */
  function afterKill(): OutboxRow[] {
    expect(s.daemon.quickCheck()).toBe("ok");
    const rows = s.daemon.outbox();
    const first = rows[0]?.seq ?? 0;
    expect(rows.map((r) => r.seq)).toEqual(rows.map((_, i) => first + i)); // contiguous
    return rows;
  }

  it("loses no committed event, duplicates none, moves nothing without a committed decision", {
    timeout: 120_000 + ITERATIONS * 5_000,
  }, async () => {
    await s.ready();
    await expect
      .poll(async () => (await keySyncRepository(s.site.db).versionsOf("gw-a1")).confirmed, {
        timeout: 20_000,
      })
      .toBeGreaterThan(0);
    const rand = prng(SEED);
    const load = traffic(rand);
    const committed = new Map<number, OutboxRow>();
    let readyKills = 0;
    let readyBefore = 0; // READY=1 messages before this process started
    const started = Date.now();
    for (let i = 0; i < ITERATIONS; i++) {
      // Most kills land while it runs; some during its start-up (store opening, recovery, connecting).
      const readyFirst = rand() < 0.8;
      if (readyFirst)
        await expect.poll(() => notify.count("READY=1"), { timeout: 30_000 }).toBeGreaterThan(readyBefore);
      readyKills += readyFirst ? 1 : 0;
      await sleep(rand() * (readyFirst ? 1_000 : 1_500));
      await s.daemon.kill();
      for (const r of afterKill()) committed.set(r.seq, r);
      readyBefore = notify.count("READY=1");
      s.daemon.restart();
    }
    await load.stop();
    await expect.poll(() => notify.count("READY=1"), { timeout: 30_000 }).toBeGreaterThan(readyBefore);
    await expect.poll(() => s.daemon.outbox().length, { timeout: 60_000 }).toBe(0);
    await report(committed, load.counts, { readyKills, ms: Date.now() - started });
  });

  /** The end: everything committed is in the cloud once; no movement without its decision. */
  async function report(
    committed: Map<number, OutboxRow>,
    counts: ReturnType<typeof traffic>["counts"],
    run: { readyKills: number; ms: number },
  ) {
    const events = await hardwareReportRepository(s.site.db).eventsOf("gw-a1");
    const decisions = await accessEventRepository(s.site.db).atDevice(DOOR);
    const states = [];
    for (const l of LOCKERS) states.push(...(await hardwareReportRepository(s.site.db).stateChangesOf(l.id)));
    const applied = [...events, ...decisions, ...states];
    const keys = applied.map((e) => `${e.outbox_id}:${e.seq}`);
    expect(new Set(keys).size).toBe(keys.length); // none applied twice
    expect(new Set(applied.map((e) => e.outbox_id)).size).toBe(1); // one store, never made again
    const seqs = new Set(applied.map((e) => e.seq));
    const kinds = ["hardware_event", "access_decision"];
    const owed = [...committed.values()].filter((r) => kinds.includes(r.type));
    expect(owed.filter((r) => !seqs.has(r.seq))).toEqual([]); // every committed one arrived

    // A door released or a latch moved only with a decision committed before it.
    const doorUnlocks = moves(6, ["unlock"]);
    const granted = decisions.filter((d) => d.granted === 1 && d.action === "unlock").length;
    expect(doorUnlocks).toBeLessThanOrEqual(granted);
    const latchMoves = LOCKERS.reduce((n, l) => n + moves(l.ch, ["lock", "unlock"]), 0);
    expect(latchMoves).toBeLessThanOrEqual(takenCommands());
    console.info(
      `kill-nine: ${ITERATIONS} kills (${run.readyKills} after READY, seed ${SEED}) in ${run.ms} ms; ` +
        `traffic ${JSON.stringify(counts)}; committed rows seen at kills ${committed.size} ` +
        `(${owed.length} events/decisions), delivered ${owed.length}, duplicated 0; applied in the cloud: ` +
        `${events.length} events, ${decisions.length} door decisions (${granted} granted unlocks), ` +
        `${states.length} locker states; door unlocks ${doorUnlocks}, latch moves ${latchMoves} ` +
        `(commands taken ${takenCommands()})`,
    );
  }

  /** Lock and unlock commands the daemon took (its command log, written before anything moves). */
  function takenCommands(): number {
    const db = new Database(path.join(s.daemon.stateDir, "gateway.db"), { readonly: true });
    try {
      const row = db
        .prepare(
          `SELECT count(*) AS n FROM command_log
            WHERE device_id IN (${LOCKERS.map(() => "?").join(", ")}) AND name IN ('lock', 'unlock')`,
        )
        .get(...LOCKERS.map((l) => l.id)) as { n: number };
      return row.n;
    } finally {
      db.close();
    }
  }
});
