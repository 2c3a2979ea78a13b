import fc from "fast-check";
import { sql } from "kysely";
import pino from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type AlarmService, createAlarmService } from "../../cloud/alarms/alarm-service.ts";
import { raiseStoredAlarm } from "../../cloud/alarms/raise-alarm.ts";
import { applyManifest } from "../../cloud/manifest/apply-manifest.ts";
import { SiteManifest } from "../../cloud/manifest/manifest-schema.ts";
import { connectionRepository } from "../../cloud/site-events/connection-repository.ts";
import { createConnectionWatch } from "../../cloud/site-events/connection-watch.ts";
import { webhookDeliveryRepository } from "../../cloud/webhooks/webhook-delivery-repository.ts";
import { type AlarmActor, SYSTEM_ACTOR } from "../../shared/domain/alarm-machine.ts";
import { DEAD_AFTER_MS, LONG_DEAD_AFTER_MS } from "../../shared/domain/health.ts";
import type { HardwareEvent } from "../../shared/wire/messages.ts";
import { type CloudHarness, fixtureSecretHash, startCloudHarness } from "../support/cloud-harness.ts";
import { CLIENTS, fixtureManifest, fx, OP_A, OP_B } from "../support/fixture-site.ts";

/**
 * The alarm inbox's store (cloud/alarms): reports driven through the cloud as a gateway sends them, the
 * connection watch and the deadline sweep raise and clear stored alarms beside their webhooks; people
 * acknowledge, assign and clear them through the service, each operator only its own.
 */

const GW = "gw-a1";
const log = pino({ level: "silent" });
const LOCKER = fx.device("L1", "1");
const L1_DEVICES = ["1", "2", "3", "4", "5"].map((a) => fx.device("L1", a));
const STAFF: AlarmActor = { kind: "staff", id: "staff-1" };
const TECH: AlarmActor = { kind: "staff", id: "staff-2" };

describe("alarms", () => {
  let h: CloudHarness;
  let alarms: AlarmService;
  let seq = 0;
  beforeEach(async () => {
    h = await startCloudHarness();
    alarms = createAlarmService({ db: h.db, clock: h.clock });
  });
  afterEach(() => h.close());

  const hardwareEvent = (event: HardwareEvent["event"], deviceId: string | null = LOCKER) =>
    h.report(GW, {
      type: "hardware_event",
      gateway_id: GW,
      seq: ++seq,
      observed_at: h.clock.now().toISOString(),
      device_id: deviceId,
      source: "bus0/1/1",
      event,
      detail: "",
    });

  const heartbeat = () =>
    h.heartbeat({
      gateway_id: GW,
      sent_at: h.clock.now().toISOString(),
      devices: L1_DEVICES.map((device_id) => ({ device_id, reachable: true })),
    });

  /** The one alarm of operator A of `kind`, with its history. */
  async function only(kind: string) {
    const of = (await alarms.list(OP_A)).filter((a) => a.kind === kind);
    expect(of, kind).toHaveLength(1);
    return alarms.get(OP_A, of[0]?.id ?? "");
  }

  it("a tamper is kept as a CRITICAL ACTIVE alarm on its device; a repeat is counted, not raised again", async () => {
    await hardwareEvent("door_opened");
    expect(await alarms.list(OP_A)).toEqual([]);
    const first = h.clock.now().toISOString();
    await hardwareEvent("tamper");
    h.clock.advance(60_000);
    await hardwareEvent("tamper");
    const { alarm, history } = await only("tamper");
    expect(alarm).toMatchObject({
      operator_id: OP_A,
      location_id: fx.location("L1"),
      device_id: LOCKER,
      severity: "CRITICAL",
      status: "ACTIVE",
      occurrences: 2,
      raised_at: first,
      last_occurred_at: h.clock.now().toISOString(),
      details: { event: "tamper", alias: "1", device_type: "LOCKER", source: "bus0/1/1" },
      acknowledged: null,
      assignee: null,
      cleared: null,
    });
    expect(history.map((c) => [c.action, c.by])).toEqual([
      ["raise", SYSTEM_ACTOR],
      ["occur", SYSTEM_ACTOR],
    ]);
    // The other operator sees none of it.
    expect(await alarms.list(OP_B)).toEqual([]);
  });

  it("the alarm and its webhook are kept together or not at all", async () => {
    const m = fixtureManifest(await fixtureSecretHash());
    const op = m.operators.find((o) => o.id === OP_A);
    if (!op) throw new Error("fixture operator A");
    op.webhooks = [
      {
        id: "5e5e5e5e-0000-4000-8000-000000000022",
        url: "https://hooks.example/alarms",
        secret: `whsec_${Buffer.alloc(32, 7).toString("base64")}`,
        delivery: "direct",
      },
    ];
    await applyManifest(h.db, SiteManifest.parse(m), h.clock);
    const queued = () => webhookDeliveryRepository(h.db).recent({ limit: 10 });
    const tamper = {
      type: "hardware_event",
      gateway_id: GW,
      seq: ++seq,
      observed_at: h.clock.now().toISOString(),
      device_id: LOCKER,
      source: "bus0/1/1",
      event: "tamper",
      detail: "",
    } as const;
    // The alarm cannot be written: the report fails whole, with no webhook queued, and the gateway resends.
    await sql`ALTER TABLE alarms RENAME TO alarms_away`.execute(h.db);
    await expect(h.report(GW, tamper)).rejects.toThrow();
    expect(await queued()).toEqual([]);
    await sql`ALTER TABLE alarms_away RENAME TO alarms`.execute(h.db);
    expect(await h.report(GW, tamper)).toBe("applied");
    expect((await queued()).map((q) => q.type)).toEqual(["alarm"]);
    expect((await only("tamper")).alarm.occurrences).toBe(1);
  });

  it("a tamper of a board, about no device, is the gateway's alarm at its location", async () => {
    await hardwareEvent("tamper", null);
    const { alarm } = await only("tamper");
    expect(alarm).toMatchObject({
      device_id: null,
      subject: `gateway:${GW}`,
      location_id: fx.location("L1"),
    });
  });

  it("a door held open is MAJOR and the door closing clears it as the system; held open again is a new alarm", async () => {
    await hardwareEvent("door_held_open");
    const held = await only("door_held_open");
    expect(held.alarm).toMatchObject({ severity: "MAJOR", status: "ACTIVE" });
    h.clock.advance(30_000);
    await hardwareEvent("door_closed");
    const closed = await alarms.get(OP_A, held.alarm.id);
    expect(closed.alarm).toMatchObject({
      status: "CLEARED",
      cleared: { by: SYSTEM_ACTOR, at: h.clock.now().toISOString(), note: "door closed" },
    });
    expect(closed.history.map((c) => c.action)).toEqual(["raise", "clear"]);
    await hardwareEvent("door_held_open");
    const all = (await alarms.list(OP_A)).filter((a) => a.kind === "door_held_open");
    expect(all.map((a) => a.status).sort()).toEqual(["ACTIVE", "CLEARED"]);
  });

  it("a jammed latch is MAJOR until the latch is reported moving; a door closing does not clear it", async () => {
    await hardwareEvent("jammed");
    await hardwareEvent("door_closed");
    expect((await only("jammed")).alarm).toMatchObject({ severity: "MAJOR", status: "ACTIVE" });
    await hardwareEvent("latch_locked");
    expect((await only("jammed")).alarm).toMatchObject({ status: "CLEARED", cleared: { by: SYSTEM_ACTOR } });
  });

  it("an interim state past its deadline is a WARNING alarm naming the command", async () => {
    const res = await h.call(CLIENTS.admin, {
      method: "POST",
      url: `/device/v1/devices/${fx.device("L1", "2")}/commands`,
      payload: { command: "lock" },
    });
    expect(res.statusCode, res.body).toBe(200);
    h.clock.advance(10 * 60_000);
    await h.sweep();
    const { alarm } = await only("interim_state_timed_out");
    expect(alarm).toMatchObject({
      severity: "WARNING",
      device_id: fx.device("L1", "2"),
      details: { command_id: res.json().id, command: "lock" },
    });
  });

  it("connection lost per device and confirmed per location; a device back online clears both as the system", async () => {
    const watch = createConnectionWatch({ db: h.db, clock: h.clock, log });
    await heartbeat();
    await watch.check();
    expect(await alarms.list(OP_A)).toEqual([]);
    h.clock.advance(DEAD_AFTER_MS + 1_000);
    await watch.check();
    const lost = await alarms.list(OP_A, { status: ["ACTIVE"] });
    // Each device of the gateway, and the gateway's own GUARD.
    expect(lost).toHaveLength(L1_DEVICES.length + 1);
    expect(new Set(lost.map((a) => [a.kind, a.severity].join()))).toEqual(new Set(["connection_lost,MINOR"]));
    h.clock.advance(2 * 3_600_000);
    await watch.check();
    await watch.check();
    const confirmed = await only("connection_confirmed");
    expect(confirmed.alarm).toMatchObject({
      severity: "CRITICAL",
      device_id: null,
      location_id: fx.location("L1"),
      subject: `location:${fx.location("L1")}`,
      occurrences: 1,
    });
    await heartbeat();
    await watch.check();
    expect(await alarms.list(OP_A, { status: ["ACTIVE", "ACKNOWLEDGED"] })).toEqual([]);
    const cleared = await alarms.list(OP_A, { status: ["CLEARED"] });
    expect(cleared).toHaveLength(L1_DEVICES.length + 2);
    for (const a of cleared) expect(a.cleared?.by).toEqual(SYSTEM_ACTOR);
  });

  it("a device first seen online (no connection event) still ends its location's confirmed outage", async () => {
    // As if the location had been confirmed dark before this gateway's devices were ever heard of: a
    // location with a second gateway installed, say.
    await h.db.transaction().execute((trx) =>
      raiseStoredAlarm(trx, {
        operatorId: OP_A,
        locationId: fx.location("L1"),
        deviceId: null,
        subject: { kind: "location", id: fx.location("L1") },
        kind: "connection_confirmed",
        details: {},
        now: h.clock.now(),
      }),
    );
    const watch = createConnectionWatch({ db: h.db, clock: h.clock, log });
    await heartbeat();
    await watch.check();
    expect((await only("connection_confirmed")).alarm).toMatchObject({
      status: "CLEARED",
      cleared: { by: SYSTEM_ACTOR, note: "a device of the location first seen online" },
    });
  });

  it("open connection alarms follow what the watch notified, under any heartbeats and clock moves", async () => {
    const watch = createConnectionWatch({ db: h.db, clock: h.clock, log });
    const L1 = fx.location("L1");
    type Step = { kind: "advance"; ms: number } | { kind: "heartbeat"; reachable: boolean[] };
    const steps: fc.Arbitrary<Step> = fc.oneof(
      fc.record({
        kind: fc.constant("advance" as const),
        ms: fc.constantFrom(5_000, DEAD_AFTER_MS + 1_000, LONG_DEAD_AFTER_MS + 60_000),
      }),
      fc.record({
        kind: fc.constant("heartbeat" as const),
        reachable: fc.array(fc.boolean(), { minLength: 5, maxLength: 5 }),
      }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(steps, { minLength: 1, maxLength: 8 }), async (run) => {
        for (const step of run) {
          if (step.kind === "advance") h.clock.advance(step.ms);
          else
            await h.heartbeat({
              gateway_id: GW,
              sent_at: h.clock.now().toISOString(),
              devices: L1_DEVICES.map((device_id, k) => ({
                device_id,
                reachable: step.reachable[k] ?? true,
              })),
            });
          await watch.check();
        }
        const notified = await connectionRepository(h.db).notified();
        const open = await alarms.list(OP_A, { status: ["ACTIVE", "ACKNOWLEDGED"] });
        const lost = open.filter((a) => a.kind === "connection_lost").map((a) => a.device_id);
        const offline = [...notified].filter(([, online]) => !online).map(([id]) => id);
        expect(lost.sort()).toEqual(offline.sort());
        // A location stays confirmed offline only while none of its devices is notified online.
        if (open.some((a) => a.kind === "connection_confirmed" && a.location_id === L1))
          expect([...notified.values()]).not.toContain(true);
      }),
      { numRuns: 25 },
    );
  });

  it("acknowledge with a note, assign and clear, each in the history with who; the lifecycle refuses the rest", async () => {
    await hardwareEvent("tamper");
    const { alarm } = await only("tamper");
    const acked = await alarms.acknowledge(OP_A, alarm.id, STAFF, "camera shows a kid with a screwdriver");
    expect(acked).toMatchObject({
      status: "ACKNOWLEDGED",
      acknowledged: { by: STAFF, note: "camera shows a kid with a screwdriver" },
    });
    await expect(alarms.acknowledge(OP_A, alarm.id, STAFF, "")).rejects.toMatchObject({
      code: "ERRORS.BAD_REQUEST",
    });
    // A note past 2,000 characters is refused before anything changes.
    await expect(alarms.clear(OP_A, alarm.id, STAFF, "x".repeat(2_001))).rejects.toMatchObject({
      code: "ERRORS.VALIDATION_FAILED",
    });
    await alarms.assign(OP_A, alarm.id, STAFF, TECH);
    // Another tamper while acknowledged is counted and keeps it acknowledged.
    await hardwareEvent("tamper");
    h.clock.advance(3_600_000);
    const cleared = await alarms.clear(OP_A, alarm.id, TECH, "case closed and sealed");
    expect(cleared).toMatchObject({
      status: "CLEARED",
      occurrences: 2,
      assignee: TECH,
      cleared: { by: TECH, note: "case closed and sealed", at: h.clock.now().toISOString() },
    });
    const { history } = await alarms.get(OP_A, alarm.id);
    expect(history.map((c) => [c.action, c.by.id, c.status])).toEqual([
      ["raise", "cloud", "ACTIVE"],
      ["acknowledge", "staff-1", "ACKNOWLEDGED"],
      ["assign", "staff-1", "ACKNOWLEDGED"],
      ["occur", "cloud", "ACKNOWLEDGED"],
      ["clear", "staff-2", "CLEARED"],
    ]);
    expect(history[2]?.assignee).toEqual(TECH);
    await expect(alarms.assign(OP_A, alarm.id, STAFF, null)).rejects.toMatchObject({
      code: "ERRORS.BAD_REQUEST",
    });
    // A tamper after the clear is a new alarm.
    await hardwareEvent("tamper");
    expect(await alarms.list(OP_A, { status: ["ACTIVE"] })).toHaveLength(1);
  });

  it("two people acknowledging at once: one wins, the other is told it is acknowledged already", async () => {
    await hardwareEvent("tamper");
    const { alarm } = await only("tamper");
    const results = await Promise.allSettled([
      alarms.acknowledge(OP_A, alarm.id, STAFF, "mine"),
      alarms.acknowledge(OP_A, alarm.id, TECH, "no, mine"),
    ]);
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    const refused = results.find((r) => r.status === "rejected");
    expect(refused?.status === "rejected" && refused.reason).toMatchObject({ code: "ERRORS.BAD_REQUEST" });
    const { history } = await alarms.get(OP_A, alarm.id);
    expect(history.map((c) => c.action)).toEqual(["raise", "acknowledge"]);
  });

  it("another operator's alarm is missing: acting on it or reading it changes and shows nothing", async () => {
    await hardwareEvent("tamper");
    const { alarm, history } = await only("tamper");
    const missing = { code: "ERRORS.NOT_FOUND" };
    const other: AlarmActor = { kind: "client", id: CLIENTS.other };
    await expect(alarms.acknowledge(OP_B, alarm.id, other, "mine now")).rejects.toMatchObject(missing);
    await expect(alarms.assign(OP_B, alarm.id, other, other)).rejects.toMatchObject(missing);
    await expect(alarms.clear(OP_B, alarm.id, other, "")).rejects.toMatchObject(missing);
    await expect(alarms.get(OP_B, alarm.id)).rejects.toMatchObject(missing);
    expect(await alarms.list(OP_B, { device_id: LOCKER })).toEqual([]);
    expect(await alarms.get(OP_A, alarm.id)).toEqual({ alarm, history });
  });

  it("lists by status, severity, location and device, within a limit", async () => {
    await hardwareEvent("tamper");
    h.clock.advance(1_000);
    await hardwareEvent("jammed", fx.device("L1", "2"));
    h.clock.advance(1_000);
    await hardwareEvent("door_held_open", fx.device("L1", "3"));
    const kinds = async (q: Parameters<AlarmService["list"]>[1]) =>
      (await alarms.list(OP_A, q)).map((a) => a.kind);
    expect(await kinds({})).toEqual(["door_held_open", "jammed", "tamper"]);
    expect(await kinds({ severity: ["MAJOR"] })).toEqual(["door_held_open", "jammed"]);
    expect(await kinds({ device_id: fx.device("L1", "2") })).toEqual(["jammed"]);
    expect(await kinds({ location_id: fx.location("L1"), limit: 1 })).toEqual(["door_held_open"]);
    expect(await kinds({ location_id: fx.location("D1") })).toEqual([]);
    expect(await kinds({ status: ["CLEARED"] })).toEqual([]);
    await expect(alarms.list(OP_A, { limit: 0 })).rejects.toMatchObject({ code: "ERRORS.VALIDATION_FAILED" });
  });

  it("two writers raising the same alarm at once make one alarm counted twice", async () => {
    const raise = () =>
      h.db.transaction().execute((trx) =>
        raiseStoredAlarm(trx, {
          operatorId: OP_A,
          locationId: fx.location("L1"),
          deviceId: LOCKER,
          subject: { kind: "device", id: LOCKER },
          kind: "tamper",
          details: {},
          now: h.clock.now(),
        }),
      );
    await Promise.all([raise(), raise(), raise()]);
    const { alarm, history } = await only("tamper");
    expect(alarm.occurrences).toBe(3);
    expect(history.map((c) => c.action)).toEqual(["raise", "occur", "occur"]);
  });
});
