import fc from "fast-check";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { deviceRepository } from "../../cloud/devices/device-repository.ts";
import { gatewayOutboxRepository } from "../../cloud/gateway-link/gateway-outbox-repository.ts";
import { gatewayRepository } from "../../cloud/gateway-link/gateway-repository.ts";
import { createHeartbeatIntake } from "../../cloud/gateway-link/heartbeat-intake.ts";
import { locationRepository } from "../../cloud/locations/location-repository.ts";
import type { DeviceRecord } from "../../cloud/store/device-record.ts";
import { type CloudHarness, startCloudHarness } from "../support/cloud-harness.ts";
import { fixtureDevices } from "../support/fixture-devices.ts";
import { openTestDbAt } from "../support/test-db.ts";

type Seen = { last_seen_at: string | null; offline_at: string | null };
type Device = Pick<DeviceRecord, "id" | "gateway_id" | "type" | "operator_id" | "location_id">;

/** One round: heartbeats of several gateways arriving together, then status reports. */
type Round = {
  advanceMs: number;
  beats: { gw: number; reachable: boolean[]; position: number }[];
  statuses: { gw: number; online: boolean }[];
};

describe("heartbeat intake (group commit)", () => {
  let h: CloudHarness;
  let devices: Device[];
  let gateways: string[];

  beforeAll(async () => {
    h = await startCloudHarness();
    devices = await fixtureDevices(h.db);
    gateways = [...new Set(devices.flatMap((d) => (d.gateway_id ? [d.gateway_id] : [])))].sort();
  });
  afterAll(() => h.close());

  const busOf = (gw: string) => devices.filter((d) => d.gateway_id === gw && d.type !== "GUARD");
  const read = async () =>
    new Map(
      (await fixtureDevices(h.db)).map((r) => [
        r.id,
        { last_seen_at: r.last_seen_at, offline_at: r.offline_at },
      ]),
    );

  it("heartbeats of many gateways at once are written together: one commit on SQLite, one statement on PostgreSQL", async () => {
    // What each store pays per write: a commit (SQLite statements cost microseconds), a round trip.
    let statements = 0;
    const counted = h.db.withPlugin({
      transformQuery: (args) => {
        statements++;
        return args.node;
      },
      transformResult: (args) => Promise.resolve(args.result),
    });
    const transactions = vi.spyOn(counted, "transaction");
    const intake = createHeartbeatIntake(counted);
    const at = h.clock.now();
    // Every gateway beats 5 times, as a busy cloud receives them: all at once.
    await Promise.all(
      gateways.flatMap((gw) =>
        [1, 2, 3, 4, 5].map(() =>
          intake.apply({ gateway_id: gw, sent_at: at.toISOString(), devices: [] }, at),
        ),
      ),
    );
    expect(gateways.length).toBeGreaterThan(2);
    if (h.store.kind === "postgres") expect(statements).toBe(1);
    else expect(transactions).toHaveBeenCalledTimes(1);
    // And it was written: every gateway's heartbeat_at is that instant.
    const stored = await Promise.all(gateways.map((gw) => gatewayRepository(h.db).find(gw)));
    expect(stored.map((g) => g?.heartbeat_at)).toEqual(gateways.map(() => at.toISOString()));
  });

  it("a heartbeat counts at its devices' location without writing the location's row", async () => {
    const gw = gateways[0] as string;
    // The location row is what commands on its devices write (their triggers raise its data version):
    // a batch of heartbeats holding it would hold them up. The views check the count instead.
    const device = busOf(gw)[0];
    if (!device) throw new Error("the gateway drives no device");
    const read = async () => {
      const [row] = await locationRepository(h.db).versioned(device.operator_id, [device.location_id]);
      if (!row) throw new Error("the device's location is gone");
      return { version: BigInt(row.data_version), beats: BigInt(row.heartbeats) };
    };
    const beat = () =>
      h.heartbeat({
        gateway_id: gw,
        sent_at: h.clock.now().toISOString(),
        devices: busOf(gw).map((d) => ({ device_id: d.id, reachable: true })),
      });
    await beat();
    const before = await read();
    h.clock.advance(5_000);
    await beat(); // the same devices reached: only the gateway's heartbeat_at moves
    const after = await read();
    expect(after.beats).toBeGreaterThan(before.beats);
    expect(after.version).toBe(before.version);
  });

  it("what a batch writes is what each heartbeat and status would have written alone, in order", async () => {
    const rounds = fc.array(
      fc.record({
        advanceMs: fc.integer({ min: 1, max: 40_000 }),
        beats: fc.uniqueArray(
          fc.record({
            gw: fc.nat(50),
            reachable: fc.array(fc.boolean(), { minLength: 8, maxLength: 8 }),
            position: fc.integer({ min: 1, max: 5 }),
          }),
          { selector: (b) => b.gw % gateways.length, maxLength: 8 },
        ),
        statuses: fc.array(fc.record({ gw: fc.nat(50), online: fc.boolean() }), { maxLength: 2 }),
      }),
      { minLength: 1, maxLength: 6 },
    );
    await fc.assert(
      fc.asyncProperty(rounds, async (rs: Round[]) => {
        // Each run starts from the store as the previous left it: the model starts from the store too.
        const model = await read();
        const positions = new Map<string, number>();
        for (const row of await gatewayOutboxRepository(h.db).positions())
          positions.set(row.gateway_id, row.unconfirmed_from);
        for (const r of rs) {
          h.clock.advance(r.advanceMs);
          const at = h.clock.now().toISOString();
          await Promise.all(
            r.beats.map((b) => {
              const gw = gateways[b.gw % gateways.length] as string;
              const bus = busOf(gw);
              const reachable = bus.filter((_, i) => b.reachable[i % b.reachable.length]);
              for (const d of devices)
                if (d.gateway_id === gw && (d.type === "GUARD" || reachable.includes(d)))
                  model.set(d.id, { ...(model.get(d.id) as Seen), last_seen_at: at });
              positions.set(gw, Math.max(positions.get(gw) ?? 0, b.position));
              return h.heartbeat({
                gateway_id: gw,
                sent_at: at,
                devices: bus.map((d) => ({ device_id: d.id, reachable: reachable.includes(d) })),
                outbox: { id: "0b9f1c2e-5d7a-4e3b-9c1d-2f4a6b8c0d1e", unconfirmed_from: b.position },
              });
            }),
          );
          for (const st of r.statuses) {
            const gw = gateways[st.gw % gateways.length] as string;
            for (const d of devices.filter((x) => x.gateway_id === gw)) {
              const was = model.get(d.id) as Seen;
              if (!st.online) model.set(d.id, { ...was, offline_at: at });
              else if (d.type === "GUARD") model.set(d.id, { last_seen_at: at, offline_at: null });
            }
            await h.status({ gateway_id: gw, online: st.online, at });
          }
        }
        expect(await read()).toEqual(model);
        const stored = await gatewayOutboxRepository(h.db).positions();
        expect(new Map(stored.map((row) => [row.gateway_id, row.unconfirmed_from]))).toEqual(positions);
      }),
      { numRuns: 25 },
    );
  });
});

describe("migration 016-gateway-heartbeats", () => {
  it("keeps when every device was last seen, and the next heartbeat takes over from there", async () => {
    const store = await openTestDbAt(
      process.env.TEST_DB === "postgres" ? "postgres" : "sqlite",
      "015-devices-by-gateway",
    );
    try {
      const at = "2026-01-15T10:00:00.000Z";
      const seen = "2026-01-15T09:59:50.000Z";
      await sql`INSERT INTO operators (id, name, created_at) VALUES ('op', 'Op', ${at})`.execute(store.db);
      await sql`INSERT INTO locations (id, operator_id, code, label, type, status, latitude, longitude, tags, attrs, created_at, updated_at)
                VALUES ('loc', 'op', 'L', 'L', 'BIKE_LOCKERS', 'ACTIVE', 0, 0, '[]', '{}', ${at}, ${at})`.execute(
        store.db,
      );
      await sql`INSERT INTO gateways (id, operator_id, location_id, secret_hash, created_at)
                VALUES ('gw', 'op', 'loc', 'x', ${at})`.execute(store.db);
      const device = (id: string, type: string, lastSeen: string | null) =>
        sql`INSERT INTO devices (id, operator_id, location_id, gateway_id, type, alias, code, hardware_id, has_camera,
                  power_save_strategy, sleep_state, state_value, state_changed_at, lock_state, hardware_state, attrs,
                  version, created_at, updated_at, last_seen_at)
                VALUES (${id}, 'op', 'loc', 'gw', ${type}, ${id}, ${id}, ${id}, 0, 'NONE', '', 'UNLOCKED', ${at},
                  'UNLOCKED', 'NORMAL', '{}', 0, ${at}, ${at}, ${lastSeen})`.execute(store.db);
      await device("guard", "GUARD", seen);
      await device("reached", "LOCKER", seen);
      await device("silent", "LOCKER", "2026-01-15T09:00:00.000Z");
      await device("never", "LOCKER", null);
      const db = await store.reopen();
      const lastSeen = async () =>
        Object.fromEntries(
          await Promise.all(
            ["guard", "never", "reached", "silent"].map(
              async (id) => [id, (await deviceRepository(db).find(id))?.last_seen_at] as const,
            ),
          ),
        );
      expect(await lastSeen()).toEqual({
        guard: seen,
        reached: seen,
        silent: "2026-01-15T09:00:00.000Z",
        never: null,
      });
      const later = "2026-01-15T10:00:10.000Z";
      await createHeartbeatIntake(db).apply(
        {
          gateway_id: "gw",
          sent_at: later,
          devices: [
            { device_id: "reached", reachable: true },
            { device_id: "silent", reachable: false },
          ],
        },
        new Date(later),
      );
      expect(await lastSeen()).toEqual({
        guard: later,
        reached: later,
        silent: "2026-01-15T09:00:00.000Z",
        never: null,
      });
    } finally {
      await store.drop();
    }
  });
});
