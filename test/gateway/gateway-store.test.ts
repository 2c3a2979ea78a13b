import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SqliteBookings } from "../../gateway/adapters/sqlite/bookings.ts";
import { SqliteCommandLog } from "../../gateway/adapters/sqlite/command-log.ts";
import { SqliteDeviceMapStore } from "../../gateway/adapters/sqlite/device-map-store.ts";
import { openGatewayStore } from "../../gateway/adapters/sqlite/gateway-store.ts";
import { type GatewayDb, openGatewayDb } from "../../gateway/adapters/sqlite/open-db.ts";
import { SqliteOutbox } from "../../gateway/adapters/sqlite/outbox.ts";
import type { Pending } from "../../gateway/ports.ts";
import { type DeviceMap, UpMessage } from "../../shared/wire/messages.ts";
import { FakeClock } from "../support/fake-clock.ts";

const GW = "gw-test";
const DEVICE = "11111111-1111-4111-8111-111111111111";
const OTHER_DEVICE = "22222222-2222-4222-8222-222222222222";
const cmdId = (n: number) => `cccccccc-0000-4000-8000-${String(n).padStart(12, "0")}`;

let dir: string;
let dbs: GatewayDb[];
let clock: FakeClock;

beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), "gw-store-"));
  dbs = [];
  clock = new FakeClock();
});

afterEach(() => {
  for (const db of dbs) if (db.open) db.close();
  rmSync(dir, { recursive: true, force: true });
});

function open(): GatewayDb {
  const db = openGatewayDb(dir);
  dbs.push(db);
  return db;
}

const event = (detail = ""): Pending => ({
  type: "hardware_event",
  device_id: DEVICE,
  source: "main/1/1",
  event: "door_opened",
  detail,
});

describe("openGatewayDb", () => {
  it("opens in WAL mode with synchronous=FULL and applies the schema once", () => {
    const db = open();
    expect(db.pragma("journal_mode", { simple: true })).toBe("wal");
    expect(db.pragma("synchronous", { simple: true })).toBe(2); // FULL
    expect(db.pragma("user_version", { simple: true })).toBe(5);
    db.close();
    // A second open does not re-run the migrations (they would fail on existing tables).
    const again = open();
    expect(again.pragma("user_version", { simple: true })).toBe(5);
  });

  it("brings a store of the first schema up to date, keeping what it holds", () => {
    const db = open();
    // Back to the first schema: the tables of the later migrations go.
    for (const t of [
      "bookings",
      "key_grants",
      "key_staging",
      "key_staging_parts",
      "key_state",
      "parked_cards",
      "pending_taps",
      "outbox_identity",
    ])
      db.exec(`DROP TABLE ${t}`);
    for (const c of ["outbox_id", "observed_mono", "observed_boot"])
      db.exec(`ALTER TABLE outbox DROP COLUMN ${c}`);
    db.pragma("user_version = 1");
    db.prepare(
      "INSERT INTO local_actions (at, who, why, device_alias, action, result) VALUES ('t', 'a', 'b', '1', 'lock', 'ok')",
    ).run();
    db.close();
    const again = open();
    expect(again.pragma("user_version", { simple: true })).toBe(5);
    expect(again.prepare("SELECT count(*) AS n FROM bookings").get()).toEqual({ n: 0 });
    expect(again.prepare("SELECT version FROM key_state").get()).toEqual({ version: 0 });
    expect(again.prepare("SELECT count(*) AS n FROM local_actions").get()).toEqual({ n: 1 });
  });
});

describe("SqliteBookings", () => {
  const at = (ms: number) => new Date(clock.now().getTime() + ms);
  const booking = (deviceId: string, untilMs: number, holder = "rider-7") => ({
    device_id: deviceId,
    holder,
    until: at(untilMs).toISOString(),
    command_id: cmdId(untilMs),
    booked_at: clock.now().toISOString(),
  });

  it("keeps one booking per device, the latest, and across a reopen", () => {
    const db = open();
    const bookings = new SqliteBookings(db);
    bookings.put(booking(DEVICE, 1_000, "a"));
    bookings.put(booking(DEVICE, 2_000, "b"));
    expect(bookings.active(DEVICE, at(0))?.holder).toBe("b");
    db.close();
    expect(new SqliteBookings(open()).all(at(0))).toEqual([booking(DEVICE, 2_000, "b")]);
  });

  it("stores an end given with a UTC offset as the same instant in UTC, so it compares as text", () => {
    const bookings = new SqliteBookings(open());
    bookings.put({ ...booking(DEVICE, 0), until: "2026-01-15T12:00:00+01:00" });
    expect(bookings.active(DEVICE, new Date("2026-01-15T10:59:59.999Z"))?.until).toBe(
      "2026-01-15T11:00:00.000Z",
    );
    expect(bookings.active(DEVICE, new Date("2026-01-15T11:00:00.000Z"))).toBeUndefined();
  });

  it("a booking is over at its end: not active, cleared by clearExpired, which returns it", () => {
    const bookings = new SqliteBookings(open());
    bookings.put(booking(DEVICE, 1_000));
    bookings.put(booking(OTHER_DEVICE, 5_000));
    expect(bookings.nextEnd()).toBe(at(1_000).toISOString());
    expect(bookings.active(DEVICE, at(999))).toBeDefined();
    expect(bookings.active(DEVICE, at(1_000))).toBeUndefined();
    expect(bookings.all(at(1_000)).map((b) => b.device_id)).toEqual([OTHER_DEVICE]);
    expect(bookings.clearExpired(at(1_000)).map((b) => b.device_id)).toEqual([DEVICE]);
    expect(bookings.clearExpired(at(1_000))).toEqual([]);
    expect(bookings.nextEnd()).toBe(at(5_000).toISOString());
  });

  it("clear ends a device's booking and says whether there was one", () => {
    const bookings = new SqliteBookings(open());
    bookings.put(booking(DEVICE, 1_000));
    expect(bookings.clear(DEVICE)).toBe(true);
    expect(bookings.clear(DEVICE)).toBe(false);
    expect(bookings.nextEnd()).toBeNull();
  });
});

// What every outbox does is its port contract (test/contracts/outbox.test.ts); here, what SQLite adds.
describe("SqliteOutbox", () => {
  it("an append inside an outer transaction that throws leaves nothing behind", () => {
    const db = open();
    const outbox = new SqliteOutbox(db, GW, clock);
    const log = new SqliteCommandLog(db);
    outbox.append(event("before"));
    const failing = db.transaction(() => {
      log.record({ command_id: cmdId(1), device_id: DEVICE, name: "lock", state: "RECEIVED", at: "x" });
      outbox.append(event("inside"));
      throw new Error("crash between writes");
    });
    expect(() => failing()).toThrow("crash between writes");
    expect(outbox.pending().map((m) => "detail" in m && m.detail)).toEqual(["before"]);
    expect(log.get(cmdId(1))).toBeUndefined();
    // The rolled-back seq is not a gap: the next message takes the next number after the last kept one.
    expect(outbox.append(event("after")).seq).toBe(2);
  });

  it("keeps rows, and the seq counter, across a close and reopen of the same directory", () => {
    const db = open();
    const outbox = new SqliteOutbox(db, GW, clock);
    for (let i = 1; i <= 3; i++) outbox.append(event(`m${i}`));
    outbox.confirm([3]);
    db.close();

    const reopened = new SqliteOutbox(open(), GW, clock);
    expect(reopened.pending().map((m) => [m.seq, "detail" in m && m.detail])).toEqual([
      [1, "m1"],
      [2, "m2"],
    ]);
    // Seq 3 was confirmed and deleted before the restart; it is still never reused.
    expect(reopened.append(event()).seq).toBe(4);
  });
});

describe("SqliteOutbox confirm", () => {
  const rowsInDbFile = (db: GatewayDb) => {
    // What survives without the WAL: a copy of the database file alone.
    const copy = path.join(dir, "file-only.db");
    copyFileSync(path.join(dir, "gateway.db"), copy);
    const only = new Database(copy, { readonly: true });
    try {
      return (only.prepare("SELECT seq FROM outbox ORDER BY seq").all() as { seq: number }[]).map(
        (r) => r.seq,
      );
    } finally {
      only.close();
      rmSync(copy);
      expect(db.open).toBe(true);
    }
  };

  it("deletes without an fsync, and is on disk before the position that counts it is reported", () => {
    const db = open();
    const outbox = new SqliteOutbox(db, GW, clock);
    for (let i = 0; i < 3; i++) outbox.append(event());
    db.pragma("wal_checkpoint(TRUNCATE)");
    expect(outbox.confirm([1, 2], outbox.id)).toBe(2);
    expect(db.pragma("synchronous", { simple: true })).toBe(2); // FULL again for everything else
    expect(outbox.pending().map((m) => m.seq)).toEqual([3]);
    expect(rowsInDbFile(db)).toEqual([1, 2, 3]); // the deletion is in the WAL only
    expect(outbox.unconfirmedFrom()).toBe(3);
    expect(rowsInDbFile(db)).toEqual([3]); // checkpointed (the WAL synced first) before it was reported
  });

  it("reports no further than what is on disk while a checkpoint cannot complete", () => {
    const db = open();
    const outbox = new SqliteOutbox(db, GW, clock);
    for (let i = 0; i < 3; i++) outbox.append(event());
    const reader = new Database(path.join(dir, "gateway.db"), { readonly: true });
    try {
      reader.prepare("BEGIN").run();
      reader.prepare("SELECT count(*) FROM outbox").get(); // holds a snapshot from before the deletion
      expect(outbox.confirm([1, 2], outbox.id)).toBe(2);
      expect(outbox.unconfirmedFrom()).toBe(1);
      reader.prepare("COMMIT").run();
      expect(outbox.unconfirmedFrom()).toBe(3);
    } finally {
      reader.close();
    }
  });

  it("inside a caller's transaction, commits with it", () => {
    const store = openGatewayStore(dir, { gatewayId: GW, clock });
    try {
      store.outbox.append(event());
      store.outbox.append(event());
      expect(() =>
        store.atomically(() => {
          expect(store.outbox.confirm([1])).toBe(1);
          throw new Error("rolled back");
        }),
      ).toThrow("rolled back");
      expect(store.outbox.pending().map((m) => m.seq)).toEqual([1, 2]);
      expect(store.atomically(() => store.outbox.confirm([1]))).toBe(1);
      expect(store.outbox.pending().map((m) => m.seq)).toEqual([2]);
    } finally {
      store.close();
    }
  });
});

describe("the outbox identity", () => {
  const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

  it("is made once with the store, kept across a reopen, and another when the state is lost", () => {
    const db = open();
    const first = new SqliteOutbox(db, GW, clock);
    expect(first.id).toMatch(UUID);
    expect(first.append(event()).outbox_id).toBe(first.id);
    db.close();
    expect(new SqliteOutbox(open(), GW, clock).id).toBe(first.id);

    for (const d of dbs) d.close();
    rmSync(dir, { recursive: true, force: true }); // a replaced SD card, a reinstall
    const remade = new SqliteOutbox(open(), GW, clock);
    expect(remade.id).toMatch(UUID);
    expect(remade.id).not.toBe(first.id);
    // Numbering starts over: the identity is what tells these messages from the first store's.
    const m = remade.append(event());
    expect([m.seq, m.outbox_id]).toEqual([1, remade.id]);
    expect(UpMessage.parse(m).outbox_id).toBe(remade.id);
  });

  it("an ack naming another outbox confirms nothing; one naming this outbox, or none, confirms by seq", () => {
    const outbox = new SqliteOutbox(open(), GW, clock);
    for (let i = 0; i < 4; i++) outbox.append(event());
    expect(outbox.confirm([1, 2], "0b9f1c2e-5d7a-4e3b-9c1d-2f4a6b8c0d1e")).toBe(0);
    expect(outbox.confirm([1, 2], "")).toBe(0); // '': rows from before the store had an identity
    expect(outbox.pending().map((m) => m.seq)).toEqual([1, 2, 3, 4]);
    expect(outbox.confirm([1, 2], outbox.id)).toBe(2);
    expect(outbox.confirm([3])).toBe(1); // a cloud from before outbox identities
    expect(outbox.pending().map((m) => m.seq)).toEqual([4]);
  });

  it("a store from before outbox identities keeps its rows under '' and numbers on under a new one", () => {
    const db = open();
    const old = new SqliteOutbox(db, GW, clock);
    old.append(event("old 1"));
    old.append(event("old 2"));
    // Back to the schema before identities, with rows as that version wrote them.
    db.exec(`UPDATE outbox SET body = json_remove(body, '$.outbox_id');
             ALTER TABLE outbox DROP COLUMN outbox_id;
             ALTER TABLE outbox DROP COLUMN observed_mono;
             ALTER TABLE outbox DROP COLUMN observed_boot;
             DROP TABLE outbox_identity;`);
    db.pragma("user_version = 3");
    db.close();

    const outbox = new SqliteOutbox(open(), GW, clock);
    const fresh = outbox.append(event("new"));
    expect([fresh.seq, fresh.outbox_id]).toEqual([3, outbox.id]);
    // The old rows go up as they were numbered: without an identity (the cloud dedups them as '').
    expect(outbox.pending().map((m) => [m.seq, m.outbox_id])).toEqual([
      [1, undefined],
      [2, undefined],
      [3, outbox.id],
    ]);
    expect(outbox.confirm([1, 3], "")).toBe(1);
    expect(outbox.confirm([2, 3], outbox.id)).toBe(1);
    expect(outbox.pending().map((m) => m.seq)).toEqual([2]);
  });
});

describe("SqliteCommandLog", () => {
  it("records a taken command, finishes it and returns it by id", () => {
    const log = new SqliteCommandLog(open());
    log.record({
      command_id: cmdId(1),
      device_id: DEVICE,
      name: "unlock",
      state: "RECEIVED",
      at: "2026-01-15T10:00:00.000Z",
    });
    expect(log.get(cmdId(1))).toEqual({
      command_id: cmdId(1),
      device_id: DEVICE,
      name: "unlock",
      state: "RECEIVED",
      reason: "",
      lock_state: null,
      received_at: "2026-01-15T10:00:00.000Z",
      finished_at: null,
    });
    log.finish(cmdId(1), "SUCCESS", "", "UNLOCKED", "2026-01-15T10:00:01.000Z");
    expect(log.get(cmdId(1))).toMatchObject({
      state: "SUCCESS",
      lock_state: "UNLOCKED",
      finished_at: "2026-01-15T10:00:01.000Z",
    });
    expect(log.get(cmdId(2))).toBeUndefined();
  });

  it("refuses a second record of the same command id (the idempotency key)", () => {
    const log = new SqliteCommandLog(open());
    const entry = {
      command_id: cmdId(1),
      device_id: DEVICE,
      name: "lock",
      state: "RECEIVED" as const,
      at: "t",
    };
    log.record(entry);
    expect(() => log.record(entry)).toThrow(/UNIQUE/);
  });

  it("lastFor gives the most recently received command of that device only", () => {
    const log = new SqliteCommandLog(open());
    const rec = (n: number, device: string, at: string) =>
      log.record({ command_id: cmdId(n), device_id: device, name: "lock", state: "RECEIVED", at });
    rec(1, DEVICE, "2026-01-15T10:00:00.000Z");
    rec(2, DEVICE, "2026-01-15T10:05:00.000Z");
    rec(3, OTHER_DEVICE, "2026-01-15T10:09:00.000Z");
    rec(4, DEVICE, "2026-01-15T10:01:00.000Z");
    expect(log.lastFor(DEVICE)?.command_id).toBe(cmdId(2));
    expect(log.lastFor(OTHER_DEVICE)?.command_id).toBe(cmdId(3));
    expect(log.lastFor("33333333-3333-4333-8333-333333333333")).toBeUndefined();
  });

  it("unfinished lists the commands taken and never finished", () => {
    const log = new SqliteCommandLog(open());
    const rec = (n: number) =>
      log.record({ command_id: cmdId(n), device_id: DEVICE, name: "lock", state: "RECEIVED", at: "t" });
    rec(1);
    rec(2);
    log.finish(cmdId(1), "SUCCESS", "", "LOCKED", "t2");
    expect(log.unfinished()).toEqual([{ command_id: cmdId(2), device_id: DEVICE, name: "lock" }]);
  });
});

describe("openGatewayStore", () => {
  it("commits what `atomically` wrote together, or nothing of it when the work throws", () => {
    const store = openGatewayStore(dir, { gatewayId: GW, clock });
    try {
      const take = (n: number, fail: boolean) =>
        store.atomically(() => {
          store.commandLog.record({
            command_id: cmdId(n),
            device_id: DEVICE,
            name: "lock",
            state: "RECEIVED",
            at: "t",
          });
          store.outbox.append(event(`taken ${n}`));
          if (fail) throw new Error("crash between writes");
        });
      take(1, false);
      expect(() => take(2, true)).toThrow("crash between writes");
      expect(store.commandLog.get(cmdId(1))).toBeDefined();
      expect(store.commandLog.get(cmdId(2))).toBeUndefined();
      expect(store.outbox.pending().map((m) => "detail" in m && m.detail)).toEqual(["taken 1"]);
      expect(store.atomically(() => 42)).toBe(42);
    } finally {
      store.close();
    }
  });

  it("records technicians' actions, and answers its checks until it is closed", () => {
    const store = openGatewayStore(dir, { gatewayId: GW, clock });
    store.localActions.record({
      at: "2026-01-15T10:00:00.000Z",
      who: "ana",
      why: "stuck latch",
      device_alias: "1",
      action: "unlock",
      result: "ok",
    });
    expect(store.checkIntegrity()).toBe("ok");
    expect(store.isAnswering()).toBe(true);
    store.close();
    expect(store.isAnswering()).toBe(false);
    const db = open();
    expect(db.prepare("SELECT who, why, device_alias, action, result FROM local_actions").all()).toEqual([
      { who: "ana", why: "stuck latch", device_alias: "1", action: "unlock", result: "ok" },
    ]);
  });
});

describe("SqliteDeviceMapStore", () => {
  const map: DeviceMap = {
    gateway_id: GW,
    version: "v1",
    devices: [
      { device_id: DEVICE, type: "LOCKER", alias: "1", bus: { board: 1, channel: 1 }, has_camera: false },
      { device_id: OTHER_DEVICE, type: "BIKE_HOUSE_DOOR", alias: "door", bus: null, has_camera: true },
    ],
  };

  it("loads nothing before a map was saved", () => {
    expect(new SqliteDeviceMapStore(open()).load()).toBeNull();
  });

  it("round-trips a saved map, replaces it on the next save, and keeps it across a reopen", () => {
    const db = open();
    const store = new SqliteDeviceMapStore(db);
    store.save(map);
    expect(store.load()).toEqual(map);
    const v2 = { ...map, version: "v2", devices: map.devices.slice(0, 1) };
    store.save(v2);
    expect(store.load()).toEqual(v2);
    expect(db.prepare("SELECT count(*) AS n FROM device_map").get()).toEqual({ n: 1 });
    db.close();
    expect(new SqliteDeviceMapStore(open()).load()).toEqual(v2);
  });

  it("ignores a stored body that no longer fits the schema", () => {
    const db = open();
    db.prepare("INSERT INTO device_map (id, version, body) VALUES (1, 'v9', ?)").run(
      JSON.stringify({ gateway_id: GW, version: "v9", devices: [{ device_id: "not-a-uuid" }] }),
    );
    expect(new SqliteDeviceMapStore(db).load()).toBeNull();
  });

  it("ignores a stored body that is not JSON at all instead of crashing the gateway at start", () => {
    const db = open();
    db.prepare("INSERT INTO device_map (id, version, body) VALUES (1, 'v9', ?)").run('{"gateway_id": "gw-');
    expect(new SqliteDeviceMapStore(db).load()).toBeNull();
  });
});
