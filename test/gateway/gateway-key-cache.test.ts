import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import pino from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SqliteKeyCache } from "../../gateway/adapters/sqlite/key-cache.ts";
import { type GatewayDb, openGatewayDb } from "../../gateway/adapters/sqlite/open-db.ts";
import { SqliteParkedCards } from "../../gateway/adapters/sqlite/parked-cards.ts";
import { createKeySync } from "../../gateway/features/key-sync.ts";
import type { KeysDelta, KeysSnapshotPart } from "../../gateway/ports.ts";
import { type Grant, SNAPSHOT_PART_SIZE } from "../../shared/wire/messages.ts";
import { FakeClock } from "../support/fake-clock.ts";

const GW = "gw-keys";
const LOCATION = "10000000-0000-4000-8000-000000000001";
const WL_A = "30000000-0000-4000-8000-00000000000a";
const WL_B = "30000000-0000-4000-8000-00000000000b";
const NOW = new Date("2026-03-02T09:00:00.000Z");

/** Card ids 0000000001, 0000000002, … (lowercase hex, even length). */
const card = (n: number) => n.toString(16).padStart(10, "0");
const aGrant = (n: number, over: Partial<Grant> = {}): Grant => ({
  card_id: card(n),
  whitelist_id: WL_A,
  status: "ACTIVE",
  expires_at: null,
  is_master_key: false,
  location_ids: [LOCATION],
  device_ids: [],
  ...over,
});
const delta = (base: number, version: number, over: Partial<KeysDelta> = {}): KeysDelta => ({
  kind: "delta",
  gateway_id: GW,
  base_version: base,
  version,
  upserts: [],
  removals: [],
  ...over,
});
/** A snapshot of `grants` in parts of `size`, at `version`. */
const snapshot = (version: number, grants: Grant[], size = SNAPSHOT_PART_SIZE): KeysSnapshotPart[] => {
  const parts = Math.max(1, Math.ceil(grants.length / size));
  return Array.from({ length: parts }, (_, i) => ({
    kind: "snapshot",
    gateway_id: GW,
    version,
    part: i + 1,
    parts,
    grants: grants.slice(i * size, (i + 1) * size),
  }));
};

let dir: string;
let db: GatewayDb;
let keys: SqliteKeyCache;
beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), "gw-keys-"));
  db = openGatewayDb(dir);
  keys = new SqliteKeyCache(db);
});
afterEach(() => {
  if (db.open) db.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("key cache: deltas", () => {
  it("starts empty at version 0", () => {
    expect([keys.version(), keys.count(), keys.grantsFor(card(1))]).toEqual([0, 0, []]);
  });

  it("applies a delta on top of the version held: upserts, removals and the version together", () => {
    expect(
      keys.applyDelta(delta(0, 1, { upserts: [aGrant(1), aGrant(2), aGrant(2, { whitelist_id: WL_B })] })),
    ).toBe(true);
    expect(keys.version()).toBe(1);
    expect(keys.grantsFor(card(2)).map((g) => g.whitelist_id)).toEqual([WL_A, WL_B]);
    const changed = aGrant(1, { status: "INACTIVE", expires_at: "2026-04-01T12:00:00+02:00" });
    expect(
      keys.applyDelta(
        delta(1, 2, { upserts: [changed], removals: [{ card_id: card(2), whitelist_id: WL_A }] }),
      ),
    ).toBe(true);
    // The grant as the cloud sent it, its expiry in UTC.
    expect(keys.grantsFor(card(1))).toEqual([{ ...changed, expires_at: "2026-04-01T10:00:00.000Z" }]);
    expect(keys.grantsFor(card(2)).map((g) => g.whitelist_id)).toEqual([WL_B]);
    expect([keys.version(), keys.count()]).toEqual([2, 2]);
  });

  it("refuses a delta made from another version, and changes nothing", () => {
    keys.applyDelta(delta(0, 3, { upserts: [aGrant(1)] }));
    expect(keys.applyDelta(delta(2, 4, { removals: [{ card_id: card(1), whitelist_id: WL_A }] }))).toBe(
      false,
    );
    expect(keys.applyDelta(delta(0, 3, { upserts: [aGrant(9)] }))).toBe(false); // a redelivery
    expect([keys.version(), keys.count(), keys.grantsFor(card(1)).length]).toEqual([3, 1, 1]);
  });

  it("removing a grant it does not hold is no error", () => {
    expect(keys.applyDelta(delta(0, 1, { removals: [{ card_id: card(5), whitelist_id: WL_A }] }))).toBe(true);
    expect(keys.version()).toBe(1);
  });

  it("keeps what it applied across a reopen", () => {
    keys.applyDelta(delta(0, 7, { upserts: [aGrant(1)] }));
    db.close();
    db = openGatewayDb(dir);
    keys = new SqliteKeyCache(db);
    expect([keys.version(), keys.count()]).toEqual([7, 1]);
  });
});

describe("key cache: snapshots", () => {
  it("stages the parts and swaps the whole cache in once the last arrives, in any order", () => {
    keys.applyDelta(delta(0, 1, { upserts: [aGrant(100), aGrant(101)] }));
    const parts = snapshot(9, [aGrant(1), aGrant(2), aGrant(3), aGrant(4), aGrant(5)], 2);
    expect(parts).toHaveLength(3);
    expect(keys.applySnapshotPart(parts[2]!)).toBe("staged");
    expect(keys.applySnapshotPart(parts[0]!)).toBe("staged");
    // Nothing of the snapshot shows until it is whole: the old cache still decides.
    expect([keys.version(), keys.count(), keys.grantsFor(card(1))]).toEqual([1, 2, []]);
    expect(keys.applySnapshotPart(parts[1]!)).toBe("applied");
    expect([keys.version(), keys.count()]).toEqual([9, 5]);
    expect(keys.grantsFor(card(100))).toEqual([]);
    expect(keys.grantsFor(card(3))).toEqual([aGrant(3)]);
  });

  it("counts a redelivered part once", () => {
    const parts = snapshot(4, [aGrant(1), aGrant(2), aGrant(3)], 2);
    expect(keys.applySnapshotPart(parts[0]!)).toBe("staged");
    expect(keys.applySnapshotPart(parts[0]!)).toBe("staged");
    expect(keys.applySnapshotPart(parts[1]!)).toBe("applied");
    expect(keys.count()).toBe(3);
  });

  it("a part of another snapshot discards the staged one, older or newer", () => {
    const v5 = snapshot(5, [aGrant(1), aGrant(2)], 1);
    const v6 = snapshot(6, [aGrant(3), aGrant(4)], 1);
    keys.applySnapshotPart(v5[0]!);
    keys.applySnapshotPart(v6[0]!); // v5's part 1 is gone
    expect(keys.applySnapshotPart(v5[1]!)).toBe("staged"); // and v6's part 1 with it
    expect(keys.applySnapshotPart(v6[1]!)).toBe("staged");
    expect(keys.applySnapshotPart(v6[0]!)).toBe("applied");
    expect(keys.version()).toBe(6);
    expect(keys.grantsFor(card(1))).toEqual([]);
    expect(keys.count()).toBe(2);
  });

  it("an empty snapshot empties the cache", () => {
    keys.applyDelta(delta(0, 1, { upserts: [aGrant(1)] }));
    expect(keys.applySnapshotPart(snapshot(2, [])[0]!)).toBe("applied");
    expect([keys.version(), keys.count()]).toEqual([2, 0]);
  });

  it("refuses a part numbered past the count, changing nothing", () => {
    const bad: KeysSnapshotPart = { ...snapshot(3, [aGrant(1)])[0]!, part: 2, parts: 1 };
    expect(() => keys.applySnapshotPart(bad)).toThrow(RangeError);
    expect([keys.version(), keys.count()]).toEqual([0, 0]);
  });

  it("after a snapshot, deltas apply on top of its version", () => {
    keys.applySnapshotPart(snapshot(10, [aGrant(1)])[0]!);
    expect(keys.applyDelta(delta(10, 11, { upserts: [aGrant(2)] }))).toBe(true);
    expect([keys.version(), keys.count()]).toEqual([11, 2]);
  });
});

describe("key cache: expiry", () => {
  it("purges grants expired at now, whatever offset they came with, and keeps the rest", () => {
    keys.applyDelta(
      delta(0, 1, {
        upserts: [
          aGrant(1, { expires_at: "2026-03-02T09:59:59.999+01:00" }), // 08:59:59.999Z: expired
          aGrant(2, { expires_at: NOW.toISOString() }), // expires now: expired
          aGrant(3, { expires_at: "2026-03-02T09:00:00.001Z" }),
          aGrant(4),
        ],
      }),
    );
    expect(keys.purgeExpired(NOW)).toBe(2);
    expect(keys.grantsFor(card(1))).toEqual([]);
    expect(keys.grantsFor(card(2))).toEqual([]);
    expect(keys.count()).toBe(2);
    expect(keys.version()).toBe(1); // housekeeping; the cloud's version is unchanged
  });

  it("the sweep judges expiry on the cloud's clock: a wall clock a day ahead deletes nothing still valid", () => {
    keys.applyDelta(delta(0, 1, { upserts: [aGrant(1, { expires_at: "2026-03-02T12:00:00.000Z" })] }));
    const wallAhead = new FakeClock(new Date(NOW.getTime() + 86_400_000));
    const sync = createKeySync({
      gatewayId: "gw-1",
      keys,
      broker: { publishKeysReport: () => undefined, on: () => undefined, off: () => undefined } as never,
      clock: wallAhead,
      cloudTime: { cloudNow: () => NOW },
      log: pino({ level: "silent" }),
      sweep: null,
    });
    expect(sync.purge()).toBe(0);
    expect(keys.grantsFor(card(1))).toHaveLength(1);
    // Before the gateway has heard the cloud at all, nothing is swept: the wall clock may be anything.
    const unheard = createKeySync({
      gatewayId: "gw-1",
      keys,
      broker: { publishKeysReport: () => undefined, on: () => undefined, off: () => undefined } as never,
      clock: new FakeClock(new Date(NOW.getTime() + 86_400_000)),
      cloudTime: { cloudNow: () => null },
      log: pino({ level: "silent" }),
      sweep: null,
    });
    expect(unheard.purge()).toBe(0);
    expect(keys.grantsFor(card(1))).toHaveLength(1);
  });
});

describe("parked cards", () => {
  it("remembers which card parked a device until cleared", () => {
    const parked = new SqliteParkedCards(db);
    const device = "20000000-0000-4000-8000-000000000001";
    expect(parked.get(device)).toBeNull();
    parked.put(device, card(1), NOW.toISOString());
    parked.put(device, card(2), NOW.toISOString());
    expect(parked.get(device)).toBe(card(2));
    expect(parked.clear(device)).toBe(true);
    expect(parked.clear(device)).toBe(false);
    expect(parked.get(device)).toBeNull();
  });
});

describe("key cache: 100,000 cards", () => {
  // How fast is bench:taps' to say (snapshot apply, tap → UNLOCK): a timed assertion here would fail
  // on a busy machine and prove nothing on a quiet one.
  it("applies a 100,000-grant snapshot in parts and finds every card it holds", () => {
    const grants = Array.from({ length: 100_000 }, (_, i) =>
      aGrant(i + 1, { expires_at: i % 3 === 0 ? "2027-01-01T00:00:00.000Z" : null }),
    );
    for (const p of snapshot(1, grants)) keys.applySnapshotPart(p);
    expect([keys.version(), keys.count()]).toEqual([1, 100_000]);

    for (let i = 0; i < 2_000; i++) {
      const n = 1 + ((i * 7919) % 100_000);
      expect(keys.grantsFor(card(n))).toHaveLength(1);
    }

    // A second snapshot replaces the first whole: a card only the first held is gone.
    for (const p of snapshot(2, grants.slice(0, 50_000))) keys.applySnapshotPart(p);
    expect(keys.grantsFor(card(100_000))).toHaveLength(0);
    expect(keys.count()).toBe(50_000);
  });
});
