import fc from "fast-check";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { deviceRepository } from "../../cloud/devices/device-repository.ts";
import { gatewayRepository } from "../../cloud/gateway-link/gateway-repository.ts";
import { connectionRepository } from "../../cloud/site-events/connection-repository.ts";
import { createConnectionWatch } from "../../cloud/site-events/connection-watch.ts";
import { DEAD_AFTER_MS, deriveHealth, isOnline, LONG_DEAD_AFTER_MS } from "../../shared/domain/health.ts";
import { type CloudHarness, startCloudHarness } from "../support/cloud-harness.ts";
import { fixtureDevices } from "../support/fixture-devices.ts";

const log = pino({ level: "silent" });

type Action =
  | { kind: "advance"; ms: number }
  | { kind: "heartbeat"; gw: number; reachable: boolean[] }
  | { kind: "status"; gw: number; online: boolean }
  | { kind: "check" };

/**
 * The watch reads only the devices whose state may have changed (a filter in SQL) and the locations where
 * none is online: after every round, what it has notified must be what health says of every device, as a
 * watch reading everything would have it, under any heartbeats, statuses and clock moves (backwards too).
 */
describe("connection watch", () => {
  let h: CloudHarness;
  let gateways: string[];

  beforeAll(async () => {
    h = await startCloudHarness();
    gateways = await gatewayRepository(h.db).allIds();
  });
  afterAll(() => h.close());

  const actions: fc.Arbitrary<Action> = fc.oneof(
    fc.record({
      kind: fc.constant("advance" as const),
      ms: fc.oneof(
        fc.integer({ min: -20_000, max: 40_000 }),
        fc.constantFrom(DEAD_AFTER_MS, LONG_DEAD_AFTER_MS, LONG_DEAD_AFTER_MS + 60_000),
      ),
    }),
    fc.record({
      kind: fc.constant("heartbeat" as const),
      gw: fc.nat(20),
      reachable: fc.array(fc.boolean(), { minLength: 6, maxLength: 6 }),
    }),
    fc.record({ kind: fc.constant("status" as const), gw: fc.nat(20), online: fc.boolean() }),
    fc.constant({ kind: "check" as const }),
  );

  it("notifies every device's online state as health derives it, and each dark location once", async () => {
    const watch = createConnectionWatch({ db: h.db, clock: h.clock, log });
    await fc.assert(
      fc.asyncProperty(fc.array(actions, { minLength: 1, maxLength: 25 }), async (as) => {
        for (const a of as) {
          const gw = "gw" in a ? (gateways[a.gw % gateways.length] as string) : "";
          const now = h.clock.now().toISOString();
          if (a.kind === "advance") h.clock.advance(a.ms);
          else if (a.kind === "status") await h.status({ gateway_id: gw, online: a.online, at: now });
          else if (a.kind === "check") await watch.check();
          else {
            const bus = (await fixtureDevices(h.db)).filter((d) => d.gateway_id === gw && d.type !== "GUARD");
            await h.heartbeat({
              gateway_id: gw,
              sent_at: now,
              devices: bus.map((d, i) => ({ device_id: d.id, reachable: a.reachable[i % 6] ?? true })),
            });
          }
        }
        await watch.check();
        const now = h.clock.now();
        const connections = connectionRepository(h.db);
        const notified = await connections.notified();
        const ids = (await fixtureDevices(h.db)).map((d) => d.id);
        const devices = deviceRepository(h.db);
        /** Per location, from scratch: devices heard of, and when each of the dead ones died. */
        const locations = new Map<string, { known: number; deadSince: string[] }>();
        for (const id of ids) {
          const d = await devices.find(id);
          const view = d ? deriveHealth(d, now) : null;
          // Never heard of: never notified either; otherwise notified as health says now.
          expect(notified.get(id), id).toBe(view ? isOnline(view) : undefined);
          if (!d || !view) continue;
          const loc = locations.get(d.location_id) ?? { known: 0, deadSince: [] };
          locations.set(d.location_id, loc);
          loc.known++;
          if (view.dead_since) loc.deadSince.push(view.dead_since);
        }
        const outages = await connections.outages();
        const confirmed = new Set(outages.map((o) => `${o.location_id} ${o.offline_since}`));
        // Never the same outage twice; every location dark for 2 hours confirmed, since its last death.
        expect(confirmed.size).toBe(outages.length);
        for (const [id, loc] of locations) {
          const since = loc.deadSince.sort().at(-1);
          if (loc.deadSince.length !== loc.known || !since) continue;
          if (now.getTime() - Date.parse(since) < LONG_DEAD_AFTER_MS) continue;
          expect(confirmed.has(`${id} ${since}`), id).toBe(true);
        }
      }),
      { numRuns: 40 },
    );
  });
});
