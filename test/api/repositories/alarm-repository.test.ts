import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AlarmRecord, alarmRepository } from "../../../cloud/alarms/alarm-repository.ts";
import {
  type AlarmChange,
  moveAlarm,
  raiseAlarm,
  SYSTEM_ACTOR,
} from "../../../shared/domain/alarm-machine.ts";
import { fx, OP_A, OP_B } from "../../support/fixture-site.ts";
import type { TestDb } from "../../support/test-db.ts";
import { openFixtureStore } from "./fixture-store.ts";

const STAFF = { kind: "staff", id: "st-1" } as const;
let ids = 0;
const nextId = () => `00000000-0000-4000-8000-${String(++ids).padStart(12, "0")}`;

/** A new ACTIVE alarm record of operator A on a device of L1, unless told otherwise. */
function alarm(over: Partial<AlarmRecord> = {}, at = "2026-01-01T00:00:00.000Z"): [AlarmRecord, AlarmChange] {
  const { life, change } = raiseAlarm(SYSTEM_ACTOR, at);
  const device = over.device_id === undefined ? fx.device("L1", "1") : over.device_id;
  const rec: AlarmRecord = {
    id: nextId(),
    operator_id: OP_A,
    location_id: fx.location("L1"),
    device_id: device,
    subject: device ? `device:${device}` : `location:${fx.location("L1")}`,
    kind: "tamper",
    severity: "CRITICAL",
    details: { event: "tamper" },
    version: 1,
    ...life,
    ...over,
  };
  return [rec, change];
}

describe("alarm repository", () => {
  let store: TestDb;
  beforeAll(async () => {
    store = await openFixtureStore();
  });
  afterAll(() => store.drop());
  const repo = () => alarmRepository(store.db);

  it("keeps a new alarm with its first history entry, found open, by its operator only", async () => {
    const [a, change] = alarm({ kind: "jammed", severity: "MAJOR", details: { n: 1 } });
    expect(await repo().insert(a, change)).toBe(true);
    expect(await repo().findOpen("jammed", a.subject)).toEqual(a);
    expect(await repo().findForOperator(OP_A, a.id)).toEqual(a);
    expect(await repo().findForOperator(OP_B, a.id)).toBeUndefined();
    expect(await repo().findOpen("tamper", "device:elsewhere")).toBeUndefined();
    expect(await repo().history(a.id)).toEqual([change]);
  });

  it("refuses a second open alarm of the same kind on the same subject, writing nothing", async () => {
    const [a, change] = alarm({ kind: "door_held_open", severity: "MAJOR" });
    const [twin] = alarm({ kind: "door_held_open", severity: "MAJOR" });
    expect(await repo().insert(a, change)).toBe(true);
    expect(await repo().insert(twin, change)).toBe(false);
    expect(await repo().findForOperator(OP_A, twin.id)).toBeUndefined();
    expect(await repo().history(twin.id)).toEqual([]);
  });

  it("changes an alarm only at the version read, numbering its history by version", async () => {
    const [a, raised] = alarm({ kind: "connection_lost", severity: "MINOR" });
    await repo().insert(a, raised);
    const ack = moveAlarm(a, { kind: "acknowledge", note: "seen" }, STAFF, "2026-01-01T00:01:00.000Z");
    if (!ack.ok) throw new Error(ack.message);
    const acked = { ...a, ...ack.life };
    expect(await repo().compareAndSet(acked, 1, ack.change)).toBe(true);
    // A writer that read version 1 too loses, and writes nothing.
    expect(await repo().compareAndSet({ ...a, occurrences: 9 }, 1, ack.change)).toBe(false);
    expect(await repo().findForOperator(OP_A, a.id)).toEqual({ ...acked, version: 2 });
    expect(await repo().history(a.id)).toEqual([raised, ack.change]);
  });

  it("a cleared alarm is no longer open: the same kind on the same subject is a new alarm", async () => {
    const [a, raised] = alarm({ kind: "interim_state_timed_out", severity: "WARNING" });
    await repo().insert(a, raised);
    const clear = moveAlarm(a, { kind: "clear", note: "" }, SYSTEM_ACTOR, "2026-01-01T00:02:00.000Z");
    if (!clear.ok) throw new Error(clear.message);
    expect(await repo().compareAndSet({ ...a, ...clear.life }, 1, clear.change)).toBe(true);
    expect(await repo().findOpen("interim_state_timed_out", a.subject)).toBeUndefined();
    const [again, raisedAgain] = alarm({ kind: "interim_state_timed_out", severity: "WARNING" });
    expect(await repo().insert(again, raisedAgain)).toBe(true);
    expect((await repo().findOpen("interim_state_timed_out", a.subject))?.id).toBe(again.id);
    expect((await repo().findForOperator(OP_A, a.id))?.cleared).toEqual(clear.life.cleared);
  });

  it("rolls back with its transaction: an alarm raised in one that fails is not kept", async () => {
    const [a, raised] = alarm({ kind: "connection_confirmed", device_id: null });
    await expect(
      store.db.transaction().execute(async (trx) => {
        await alarmRepository(trx).insert(a, raised);
        throw new Error("the event was not kept");
      }),
    ).rejects.toThrow("not kept");
    expect(await repo().findForOperator(OP_A, a.id)).toBeUndefined();
    expect(await repo().history(a.id)).toEqual([]);
  });

  describe("lists", () => {
    // A store of their own: the alarms above would be listed too.
    let own: TestDb;
    let mine: AlarmRecord[];
    const repo = () => alarmRepository(own.db);
    beforeAll(async () => {
      own = await openFixtureStore();
      const rows = [
        alarm({ kind: "tamper" }, "2026-02-01T00:00:01.000Z"),
        alarm({ kind: "jammed", severity: "MAJOR", status: "ACKNOWLEDGED" }, "2026-02-01T00:00:02.000Z"),
        alarm(
          { kind: "tamper", device_id: fx.device("D1", "1"), location_id: fx.location("D1") },
          "2026-02-01T00:00:03.000Z",
        ),
        alarm({ kind: "connection_lost", severity: "MINOR", status: "CLEARED" }, "2026-02-01T00:00:04.000Z"),
      ];
      for (const [a, c] of rows) await repo().insert(a, c);
      const [other, c] = alarm({
        operator_id: OP_B,
        location_id: fx.location("B1"),
        device_id: fx.device("B1", "1"),
      });
      await repo().insert(other, c);
      mine = rows.map(([a]) => a);
    });
    afterAll(() => own.drop());

    const idsOf = (as: AlarmRecord[]) => as.map((a) => a.id);
    const at = (...k: number[]) => k.map((n) => mine[n]?.id);

    it("the operator's own, newest raised first, at most the limit", async () => {
      expect(idsOf(await repo().list(OP_A, { limit: 10 }))).toEqual(at(3, 2, 1, 0));
      expect(idsOf(await repo().list(OP_A, { limit: 2 }))).toEqual(at(3, 2));
      expect(await repo().list(OP_B, { limit: 10 })).toHaveLength(1);
    });

    it("by status, severity, location and device, every filter given holding", async () => {
      const list = (f: Parameters<ReturnType<typeof repo>["list"]>[1]) => repo().list(OP_A, f).then(idsOf);
      expect(await list({ limit: 10, status: ["ACTIVE", "ACKNOWLEDGED"] })).toEqual(at(2, 1, 0));
      expect(await list({ limit: 10, status: ["CLEARED"] })).toEqual(at(3));
      expect(await list({ limit: 10, severity: ["CRITICAL"] })).toEqual(at(2, 0));
      expect(await list({ limit: 10, location_id: fx.location("D1") })).toEqual(at(2));
      expect(
        await list({ limit: 10, device_id: fx.device("L1", "1"), severity: ["MAJOR", "MINOR"] }),
      ).toEqual(at(3, 1));
      // Another operator's location lists nothing, not its alarms.
      expect(await list({ limit: 10, location_id: fx.location("B1") })).toEqual([]);
    });
  });
});
