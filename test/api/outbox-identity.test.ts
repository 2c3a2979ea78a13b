import { sql } from "kysely";
import pino from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DEFAULT_COMMAND_TIMEOUTS } from "../../cloud/devices/timeouts.ts";
import { createAppliedSeqsPruner } from "../../cloud/gateway-link/applied-seqs-pruner.ts";
import { applyUpMessage } from "../../cloud/gateway-link/apply-up-message.ts";
import { gatewayOutboxRepository } from "../../cloud/gateway-link/gateway-outbox-repository.ts";
import { hardwareReportRepository } from "../../cloud/gateway-link/hardware-report-repository.ts";
import { Command } from "../../shared/api/command.ts";
import { UpMessage, type UpMessageInput } from "../../shared/wire/messages.ts";
import { type CloudHarness, startCloudHarness } from "../support/cloud-harness.ts";
import { eventually } from "../support/eventually.ts";
import { CLIENTS, fx } from "../support/fixture-site.ts";
import { openTestDbAt } from "../support/test-db.ts";

const log = pino({ level: "silent" });
const LOCKER = fx.device("L1", "1");
/** Two stores of gw-a1: the one whose state directory was lost, and the one made after it. */
const LOST = "0b9f1c2e-5d7a-4e3b-9c1d-2f4a6b8c0d1e";
const REMADE = "7e3a5c1f-2b4d-4f6a-8c0e-1d3f5a7b9c2e";
const DAY = 24 * 3_600_000;
const RETENTION = 7 * DAY;

let h: CloudHarness;
beforeEach(async () => {
  h = await startCloudHarness();
});
afterEach(() => h.close());

/** A report of gw-a1's sensors on the locker, numbered `seq` in `outbox` (undefined: none named). */
const sensed = (seq: number, outbox: string | undefined, lock: "LOCKED" | "UNLOCKED", gw = "gw-a1") =>
  h.report(gw, {
    type: "device_state",
    gateway_id: gw,
    ...(outbox === undefined ? {} : { outbox_id: outbox }),
    seq,
    observed_at: h.clock.now().toISOString(),
    device_id: LOCKER,
    lock_state: lock,
  });

const doorOpened = (seq: number, outbox: string | undefined): UpMessageInput => ({
  type: "hardware_event",
  gateway_id: "gw-a1",
  ...(outbox === undefined ? {} : { outbox_id: outbox }),
  seq,
  observed_at: h.clock.now().toISOString(),
  device_id: LOCKER,
  source: "bus0/1/1",
  event: "door_opened",
});

async function lockState(): Promise<string> {
  const res = await h.call(CLIENTS.admin, { method: "GET", url: `/device/v1/devices/${LOCKER}` });
  return res.json().lock_state;
}

/** applied_seqs of a gateway as [outbox_id, seq], in order. */
const applied = async (gw = "gw-a1") =>
  (await gatewayOutboxRepository(h.db).appliedOf(gw)).map((r) => [r.outbox_id, Number(r.seq)]);

describe("outbox messages are applied once per (gateway, outbox, seq)", () => {
  it("the same seq from another outbox is applied; from the same outbox it is a duplicate", async () => {
    expect(await sensed(1, LOST, "LOCKED")).toBe("applied");
    expect(await lockState()).toBe("LOCKED");
    // The store was lost and made again: its numbering starts over at 1.
    expect(await sensed(1, REMADE, "UNLOCKED")).toBe("applied");
    expect(await lockState()).toBe("UNLOCKED");
    // A late copy of the lost store's message changes nothing.
    expect(await sensed(1, LOST, "LOCKED")).toBe("duplicate");
    expect(await sensed(1, REMADE, "LOCKED")).toBe("duplicate");
    expect(await lockState()).toBe("UNLOCKED");
    expect(await applied()).toEqual([
      [LOST, 1],
      [REMADE, 1],
    ]);
  });

  it("a message naming no outbox (an older gateway) dedups as the empty identity", async () => {
    expect(await sensed(1, undefined, "LOCKED")).toBe("applied");
    expect(await sensed(1, undefined, "UNLOCKED")).toBe("duplicate");
    expect(await sensed(1, REMADE, "UNLOCKED")).toBe("applied");
    expect(await applied()).toEqual([
      ["", 1],
      [REMADE, 1],
    ]);
  });

  it("site events keep both stores' events under the same seq", async () => {
    expect(await h.report("gw-a1", doorOpened(7, LOST))).toBe("applied");
    expect(await h.report("gw-a1", doorOpened(7, REMADE))).toBe("applied");
    expect(await h.report("gw-a1", doorOpened(7, undefined))).toBe("applied");
    expect(await h.report("gw-a1", doorOpened(7, REMADE))).toBe("duplicate");
    const events = await hardwareReportRepository(h.db).eventsOf("gw-a1");
    expect(events.map((e) => [e.outbox_id, Number(e.seq)]).sort()).toEqual([
      ["", 7],
      [LOST, 7],
      [REMADE, 7],
    ]);
  });

  it("a command sent after the store was lost completes, though its seqs were used before", async () => {
    const post = async () => {
      const res = await h.call(CLIENTS.admin, {
        method: "POST",
        url: `/device/v1/devices/${LOCKER}/commands`,
        payload: { command: "lock" },
      });
      expect(res.statusCode, res.body).toBe(200);
      return Command.parse(res.json());
    };
    const progress = (cmd: Command, outbox: string, seq: number, state: "RECEIVED" | "SUCCESS") =>
      h.report("gw-a1", {
        type: "command_progress",
        gateway_id: "gw-a1",
        outbox_id: outbox,
        seq,
        observed_at: h.clock.now().toISOString(),
        command_id: cmd.id,
        device_id: LOCKER,
        state,
        lock_state: "LOCKED",
      });
    const first = await post();
    expect(await progress(first, LOST, 1, "RECEIVED")).toBe("applied");
    expect(await progress(first, LOST, 2, "SUCCESS")).toBe("applied");
    await sensed(3, LOST, "UNLOCKED"); // someone turned the latch back by hand
    h.clock.advance(60_000); // past the throttle on moving one latch again
    const second = await post();
    expect(await progress(second, REMADE, 1, "RECEIVED")).toBe("applied");
    expect(await progress(second, REMADE, 2, "SUCCESS")).toBe("applied");
    const res = await h.call(CLIENTS.admin, { method: "GET", url: `/device/v1/commands/${second.id}` });
    expect(res.json().state.value).toBe("SUCCESS");
    expect(await lockState()).toBe("LOCKED");
  });
});

describe("applied_seqs is pruned below what each outbox will never send again", () => {
  const pruner = () => createAppliedSeqsPruner({ db: h.db, clock: h.clock, log, retentionMs: RETENTION });
  const heartbeat = (id: string, unconfirmedFrom: number, gw = "gw-a1") =>
    h.heartbeat({
      gateway_id: gw,
      sent_at: h.clock.now().toISOString(),
      devices: [],
      outbox: { id, unconfirmed_from: unconfirmedFrom },
    });
  const sense = async (outbox: string | undefined, seqs: number[], gw = "gw-a1") => {
    for (const seq of seqs) await sensed(seq, outbox, seq % 2 ? "LOCKED" : "UNLOCKED", gw);
  };
  const rows = (outbox: string, ...seqs: number[]) => seqs.map((s) => [outbox, s]);

  it("only once the outbox said so at least the retention ago, and only below what it said", async () => {
    const p = pruner();
    await sense(REMADE, [1, 2, 3, 4, 5]);
    await heartbeat(REMADE, 4); // 1–3 confirmed; 4 and 5 may still come again
    expect(await p.prune()).toBe(0);
    h.clock.advance(RETENTION - 1);
    expect(await p.prune()).toBe(0);
    h.clock.advance(1);
    expect(await p.prune()).toBe(3);
    expect(await applied()).toEqual(rows(REMADE, 4, 5));
    // What may still come again is still a duplicate.
    expect(await sensed(5, REMADE, "LOCKED")).toBe("duplicate");
  });

  it("a later report is used once it is old enough in turn; a lower one (out of order) changes nothing", async () => {
    const p = pruner();
    await sense(REMADE, [1, 2, 3, 4, 5]);
    await heartbeat(REMADE, 2);
    h.clock.advance(RETENTION);
    await heartbeat(REMADE, 6);
    await heartbeat(REMADE, 3); // a late heartbeat applied after a newer one
    expect(await p.prune()).toBe(1); // below 2: the only report old enough
    expect(await applied()).toEqual(rows(REMADE, 2, 3, 4, 5));
    h.clock.advance(RETENTION - 1);
    expect(await p.prune()).toBe(0);
    h.clock.advance(1);
    expect(await p.prune()).toBe(4);
    expect(await applied()).toEqual([]);
  });

  it("rows of an outbox that never reported, and of other gateways, are kept", async () => {
    const p = pruner();
    await sense(LOST, [1, 2, 3]); // an older gateway version, or a store lost before its first heartbeat
    await sense(REMADE, [1, 2, 3], "gw-a2");
    await sense(REMADE, [1, 2, 3]);
    await heartbeat(REMADE, 4);
    h.clock.advance(RETENTION);
    expect(await p.prune()).toBe(3);
    expect(await applied()).toEqual(rows(LOST, 1, 2, 3));
    expect(await applied("gw-a2")).toEqual(rows(REMADE, 1, 2, 3));
  });

  it("rows that named no outbox go below the gateway's highest checkpoint (the same seq numbering)", async () => {
    const p = pruner();
    await sense(undefined, [1, 2, 3, 4]); // before the upgrade
    await sense(LOST, [5, 6]); // after it: the store took an identity and numbered on
    await heartbeat(LOST, 4); // 4 may still go up (as a message naming no outbox)
    h.clock.advance(RETENTION);
    expect(await p.prune()).toBe(3);
    expect(await applied()).toEqual([...rows("", 4), ...rows(LOST, 5, 6)]);
  });

  it("runs on its own every period of the clock", async () => {
    const p = createAppliedSeqsPruner({
      db: h.db,
      clock: h.clock,
      log,
      retentionMs: RETENTION,
      everyMs: 3_600_000,
    });
    await sense(REMADE, [1, 2]);
    await heartbeat(REMADE, 3);
    h.clock.advance(RETENTION);
    p.start();
    try {
      expect(await applied()).toEqual(rows(REMADE, 1, 2));
      h.clock.advance(3_600_000);
      await eventually(async () => expect(await applied()).toEqual([]));
    } finally {
      p.stop();
    }
  });
});

describe("migration 012-outbox-identity", () => {
  it("keeps every row of the tables keyed by an outbox message, under the empty identity", async () => {
    const kind = h.store.kind;
    const store = await openTestDbAt(kind, "011-photos");
    try {
      const at = "2026-01-15T10:00:00.000Z";
      await sql`INSERT INTO applied_seqs (gateway_id, seq, applied_at) VALUES ('gw-a1', 1, ${at}), ('gw-a1', 2, ${at})`.execute(
        store.db,
      );
      await sql`INSERT INTO hardware_events (gateway_id, seq, device_id, source, event, detail, observed_at, received_at)
                VALUES ('gw-a1', 2, ${LOCKER}, 'bus0/1/1', 'door_opened', '', ${at}, ${at})`.execute(
        store.db,
      );
      await sql`INSERT INTO device_state_changes (gateway_id, seq, device_id, from_value, to_value, lock_state, cause, detail, observed_at, received_at)
                VALUES ('gw-a1', 1, ${LOCKER}, 'UNLOCKED', 'LOCKED', 'LOCKED', 'tap', '', ${at}, ${at})`.execute(
        store.db,
      );
      await sql`INSERT INTO access_events (gateway_id, seq, operator_id, location_id, device_id, reader, card_id, granted, action, reason, whitelist_id, decided_by, actuated, observed_at, received_at)
                VALUES ('gw-a1', 3, 'op', 'loc', ${LOCKER}, 'reader-1', 'ab12', 1, 'lock', 'parked', NULL, 'local', 1, ${at}, ${at})`.execute(
        store.db,
      );
      const db = await store.reopen();
      const keyed = (table: "applied_seqs" | "hardware_events" | "device_state_changes" | "access_events") =>
        db
          .selectFrom(table)
          .select(["gateway_id", "outbox_id", "seq"])
          .orderBy("seq")
          .execute()
          .then((r) => r.map((x) => [x.gateway_id, x.outbox_id, Number(x.seq)]));
      expect(await keyed("applied_seqs")).toEqual([
        ["gw-a1", "", 1],
        ["gw-a1", "", 2],
      ]);
      expect(await keyed("hardware_events")).toEqual([["gw-a1", "", 2]]);
      expect(await keyed("device_state_changes")).toEqual([["gw-a1", "", 1]]);
      expect(await keyed("access_events")).toEqual([["gw-a1", "", 3]]);
      const detail = await db.selectFrom("hardware_events").select(["event", "device_id"]).executeTakeFirst();
      expect(detail).toEqual({ event: "door_opened", device_id: LOCKER });
      // A message from before, sent again without an identity, is still a duplicate; one naming an outbox
      // is new. (The fixture site is not in this store: applying changes nothing but the dedup row.)
      const deps = { now: new Date(at), timeouts: DEFAULT_COMMAND_TIMEOUTS, log };
      const again = (outbox?: string) =>
        applyUpMessage(
          db,
          "gw-a1",
          UpMessage.parse({
            type: "hardware_event",
            gateway_id: "gw-a1",
            ...(outbox ? { outbox_id: outbox } : {}),
            seq: 2,
            observed_at: at,
            device_id: null,
            source: "bus0/1/1",
            event: "door_closed",
          }),
          deps,
        );
      expect(await again()).toBe("duplicate");
      expect(await again(REMADE)).toBe("applied");
      expect(await keyed("hardware_events")).toEqual([
        ["gw-a1", "", 2],
        ["gw-a1", REMADE, 2],
      ]);
      // The indexes came back with the tables.
      const indexes =
        kind === "postgres"
          ? await sql<{ name: string }>`SELECT indexname AS name FROM pg_indexes
                                         WHERE schemaname = current_schema()`.execute(db)
          : await sql<{ name: string }>`SELECT name FROM sqlite_master WHERE type = 'index'`.execute(db);
      expect(indexes.rows.map((r) => r.name)).toEqual(
        expect.arrayContaining(
          [
            "hardware_events_device",
            "device_state_changes_device",
            "access_events_device",
            "applied_seqs_outbox_pk",
          ].filter((n) => kind === "postgres" || !n.endsWith("_pk")),
        ),
      );
    } finally {
      await store.drop();
    }
  });
});
