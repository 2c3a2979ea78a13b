import { sql } from "kysely";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { deviceRepository } from "../../cloud/devices/device-repository.ts";
import { DEFAULT_COMMAND_TIMEOUTS as TIMEOUTS } from "../../cloud/devices/timeouts.ts";
import { createReportIntake } from "../../cloud/gateway-link/report-intake.ts";
import type { Db } from "../../cloud/store/db.ts";
import type { DeviceStateReport } from "../../shared/wire/messages.ts";
import { fx } from "../support/fixture-site.ts";
import type { TestDb } from "../support/test-db.ts";
import { openFixtureStore } from "./repositories/fixture-store.ts";

const L1 = ["1", "2", "3", "4", "5"].map((a) => fx.device("L1", a));
const D1 = ["1", "2", "3"].map((a) => fx.device("D1", a));
const B1 = fx.device("B1", "1");

const report = (
  device_id: string,
  seq: number,
  extra: Partial<DeviceStateReport> = {},
): DeviceStateReport => ({
  type: "device_state",
  gateway_id: "",
  seq,
  outbox_id: "ob",
  observed_at: "2026-01-15T10:00:00.000Z",
  device_id,
  door_open: true,
  cause: "device_map",
  detail: "",
  ...extra,
});

/** Counts transactions and statements, and fails any statement that names `poison` (a string in it). */
function instrumented(db: Db, poison?: string) {
  const seen = { statements: 0 };
  const counted = db.withPlugin({
    transformQuery: (args) => {
      seen.statements++;
      if (poison && JSON.stringify(args.node).includes(poison)) throw new Error(`poisoned: ${poison}`);
      return args.node;
    },
    transformResult: (args) => Promise.resolve(args.result),
  });
  return { db: counted, seen, transactions: vi.spyOn(counted, "transaction") };
}

// The batch is PostgreSQL's (SQLite applies each report as it comes): api-postgres only.
describe("device report intake (group commit, PostgreSQL)", () => {
  let store: TestDb;
  beforeAll(async () => {
    store = await openFixtureStore();
  });
  afterAll(() => store.drop());

  const versionOf = async (code: string) => {
    const r = await sql<{ v: string }>`SELECT cast(data_version AS text) AS v FROM locations
      WHERE id = ${fx.location(code)}`.execute(store.db);
    return BigInt(r.rows[0]?.v ?? -1);
  };

  it("applies many gateways' reports in one transaction, each settled on its own, and raises each location's version once", async () => {
    const { db, transactions } = instrumented(store.db);
    const log = pino({ level: "silent" });
    const warn = vi.spyOn(log, "warn");
    const intake = createReportIntake(db, { timeouts: TIMEOUTS, log, refused: () => {} });
    const before = { l1: await versionOf("L1"), d1: await versionOf("D1") };
    const now = new Date("2026-01-15T10:00:01.000Z");
    const sent = [
      ...L1.map((d, i) => intake.apply("gw-a1", { ...report(d, i + 1), gateway_id: "gw-a1" }, now)),
      ...D1.map((d, i) => intake.apply("gw-a2", { ...report(d, i + 1), gateway_id: "gw-a2" }, now)),
      intake.apply("gw-b1", { ...report(B1, 1, { lock_state: "UNLOCKED" }), gateway_id: "gw-b1" }, now),
      // Another gateway's device: refused (S30), the rest unharmed.
      intake.apply("gw-b1", { ...report(L1[0] as string, 2), gateway_id: "gw-b1" }, now),
    ];
    expect(await Promise.all(sent)).toEqual([...L1, ...D1, B1, "x"].map(() => "applied"));
    expect(transactions).toHaveBeenCalledTimes(1);
    expect(warn).toHaveBeenCalledTimes(1); // the foreign device, not a failed batch
    const devices = deviceRepository(store.db);
    for (const id of [...L1, ...D1, B1]) {
      const d = await devices.find(id);
      expect(d?.door_open).toBe(true);
      expect(d?.sensors_at).toBe(now.toISOString());
    }
    expect(await versionOf("L1")).toBe(before.l1 + 1n);
    expect(await versionOf("D1")).toBe(before.d1 + 1n);
    // Sent again (its ack was lost): a duplicate, changing nothing.
    const again = intake.apply(
      "gw-a1",
      { ...report(L1[1] as string, 2, { door_open: false }), gateway_id: "gw-a1" },
      now,
    );
    expect(await again).toBe("duplicate");
    expect((await devices.find(L1[1] as string))?.door_open).toBe(true);
  });

  it("a batch that fails is applied report by report: the one that cannot be loses nothing of the others", async () => {
    // Any statement naming gw-a3 fails: the batch's first, then that report's own.
    const { db } = instrumented(store.db, "gw-a3");
    const log = pino({ level: "silent" });
    const intake = createReportIntake(db, { timeouts: TIMEOUTS, log, refused: () => {} });
    const now = new Date("2026-01-15T10:00:02.000Z");
    const house = fx.device("H1", "1");
    const sent = [
      intake.apply(
        "gw-a1",
        { ...report(L1[2] as string, 10, { door_open: false }), gateway_id: "gw-a1" },
        now,
      ),
      intake.apply("gw-a3", { ...report(house, 1), gateway_id: "gw-a3" }, now),
      intake.apply(
        "gw-a2",
        { ...report(D1[0] as string, 10, { door_open: false }), gateway_id: "gw-a2" },
        now,
      ),
    ];
    const settled = await Promise.allSettled(sent);
    expect(settled.map((s) => s.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    const devices = deviceRepository(store.db);
    expect((await devices.find(L1[2] as string))?.door_open).toBe(false);
    expect((await devices.find(D1[0] as string))?.door_open).toBe(false);
    expect((await devices.find(house))?.door_open).not.toBe(true);
  });

  it("a failing batch applied report by report keeps each gateway's order: its later report wins", async () => {
    const { db } = instrumented(store.db, "gw-a3");
    const log = pino({ level: "silent" });
    const intake = createReportIntake(db, { timeouts: TIMEOUTS, log, refused: () => {} });
    const now = new Date("2026-01-15T10:00:02.500Z");
    const target = L1[4] as string;
    // Handed in one after the other without waiting, as a gateway's chain hands its reports on.
    const sent = [
      intake.apply("gw-a1", { ...report(target, 40, { door_open: false }), gateway_id: "gw-a1" }, now),
      intake.apply("gw-a3", { ...report(fx.device("H1", "1"), 2), gateway_id: "gw-a3" }, now),
      intake.apply("gw-a1", { ...report(target, 41, { door_open: true }), gateway_id: "gw-a1" }, now),
      intake.apply("gw-a1", { ...report(target, 42, { item_present: true }), gateway_id: "gw-a1" }, now),
    ];
    const settled = await Promise.allSettled(sent);
    expect(settled.map((s) => s.status)).toEqual(["fulfilled", "rejected", "fulfilled", "fulfilled"]);
    const device = await deviceRepository(store.db).find(target);
    expect(device?.door_open).toBe(true);
    expect(device?.item_present).toBe(true);
  });

  it("a command writing a device of the batch's location while the batch runs: neither deadlocks", async () => {
    const log = pino({ level: "silent" });
    const warn = vi.spyOn(log, "warn");
    const intake = createReportIntake(store.db, { timeouts: TIMEOUTS, log });
    const now = new Date("2026-01-15T10:00:03.000Z");
    const pids: number[] = [];
    const pid = async (trx: Db) =>
      pids.push((await sql<{ p: number }>`SELECT pg_backend_pid() AS p`.execute(trx)).rows[0]?.p ?? 0);
    /** Until n transactions wait for a lock one of ours holds (events, not time: polled). */
    const waiting = async (n: number) => {
      for (;;) {
        const r = await sql<{ n: string }>`SELECT count(*) AS n FROM pg_stat_activity
          WHERE pg_blocking_pids(pid) && ${pids}::int[]`.execute(store.db);
        if (Number(r.rows[0]?.n) >= n) return;
        await new Promise((r) => setImmediate(r));
      }
    };
    // The location's row held by a third transaction: a command gets its device, then waits for it.
    let release!: () => void;
    const held = new Promise<void>((r) => {
      release = r;
    });
    const holder = store.db.transaction().execute(async (trx) => {
      await pid(trx);
      await sql`UPDATE locations SET label = label WHERE id = ${fx.location("L1")}`.execute(trx);
      await held;
    });
    const target = L1[3] as string;
    const command = store.db.transaction().execute(async (trx) => {
      await pid(trx);
      const devices = deviceRepository(trx);
      const device = await devices.find(target);
      if (!device) throw new Error("no device");
      return devices.compareAndSet(device, { command_id: null, door_open: false }, now);
    });
    await waiting(1);
    // The batch reports every device of the location, the command's among them.
    const batch = Promise.all(
      L1.map((d, i) => intake.apply("gw-a1", { ...report(d, 20 + i), gateway_id: "gw-a1" }, now)),
    );
    await waiting(2);
    release();
    await holder;
    expect(await command).not.toBeNull();
    expect(await batch).toEqual(L1.map(() => "applied"));
    expect(warn).not.toHaveBeenCalled(); // no batch failed (a deadlock would have)
    expect((await deviceRepository(store.db).find(target))?.door_open).toBe(true);
  });
});
