import pino from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { commandRepository } from "../../cloud/commands/command-repository.ts";
import { deviceRepository } from "../../cloud/devices/device-repository.ts";
import { applyManifest } from "../../cloud/manifest/apply-manifest.ts";
import { SiteManifest } from "../../cloud/manifest/manifest-schema.ts";
import { startWebhookDelivery, type WebhookDelivery } from "../../cloud/webhooks/webhook-delivery.ts";
import { Command } from "../../shared/api/command.ts";
import { type CloudHarness, fixtureSecretHash, startCloudHarness } from "../support/cloud-harness.ts";
import { FakeClock } from "../support/fake-clock.ts";
import { CLIENTS, fixtureManifest, fx, OP_A } from "../support/fixture-site.ts";
import { openReplicaDb, openTestDb } from "../support/test-db.ts";
import { WebhookReceiver } from "../support/webhook-receiver.ts";

/**
 * Every replica of the cloud runs the deadline sweep (cloud/commands/deadline-sweeper.ts); each ending is
 * a compare-and-set, so two replicas racing over the same expired commands end each exactly once.
 */
const HOOK = "5e5e5e5e-0000-4000-8000-00000000d1e5";
const LOCKERS = Array.from({ length: 24 }, (_, i) => `r${i + 1}`);

describe("two replicas on one PostgreSQL store sweeping the same deadlines", () => {
  const replicas: CloudHarness[] = [];
  let receiver: WebhookReceiver | null = null;
  let worker: WebhookDelivery | null = null;
  afterEach(async () => {
    await worker?.stop();
    await receiver?.stop();
    worker = null;
    receiver = null;
    // The second holds a handle on the first one's schema: it lets go first, then the schema goes.
    for (const h of replicas.reverse()) await h.close();
    replicas.length = 0;
  });

  it("end each expired command once: one REQUEST_TIMED_OUT, one webhook message, one notice", async () => {
    const store = await openTestDb("postgres");
    const clock = new FakeClock();
    const a = await startCloudHarness({ store, clock });
    replicas.push(a);
    const b = await startCloudHarness({ store: await openReplicaDb(store), clock });
    replicas.push(b);
    receiver = await new WebhookReceiver(() => clock.now()).start();
    // More lockers on gw-a1, and a direct webhook endpoint for operator A's site events.
    const m = fixtureManifest(await fixtureSecretHash());
    const op = m.operators.find((o) => o.id === OP_A);
    const gw = op?.locations?.find((l) => l.code === "L1")?.gateways?.find((g) => g.id === "gw-a1");
    if (!op || !gw?.devices) throw new Error("fixture gateway gw-a1");
    gw.devices.push(
      ...LOCKERS.map((alias, i) => ({ alias, type: "LOCKER" as const, bus: { board: 2, channel: i + 1 } })),
    );
    op.webhooks = [
      {
        id: HOOK,
        url: receiver.url,
        allow_private: true,
        secret: `whsec_${Buffer.alloc(32, 9).toString("base64")}`,
        delivery: "direct",
      },
    ];
    await applyManifest(a.db, SiteManifest.parse(m), clock);

    // Commands made through both replicas' APIs, handed to the broker (SENT), never answered.
    const ids: string[] = [];
    for (const [i, alias] of LOCKERS.entries()) {
      const via = i % 2 === 0 ? a : b;
      const res = await via.call(CLIENTS.admin, {
        method: "POST",
        url: `/device/v1/devices/${fx.device("L1", alias)}/commands`,
        payload: { command: "lock" },
      });
      expect(res.statusCode, res.body).toBe(200);
      const cmd = Command.parse(res.json());
      expect(cmd.state.value).toBe("SENT");
      ids.push(cmd.id);
    }
    const notices = new Map<string, number>();
    for (const h of replicas)
      for (const id of ids) h.settled.subscribe(id, () => notices.set(id, (notices.get(id) ?? 0) + 1));

    clock.advance(a.timeouts.deliveryMs + 1_000);
    // Both replicas' sweeps at the same instant, twice over, all at once.
    await Promise.all([a.sweep(), b.sweep(), a.sweep(), b.sweep()]);
    expect(await Promise.all([a.sweep(), b.sweep()])).toEqual([0, 0]);

    const commands = commandRepository(a.db);
    for (const id of ids) {
      const c = await commands.find(id);
      expect(c?.state.value, id).toBe("ERROR");
      expect(
        c?.events.filter((e) => e.name === "REQUEST_TIMED_OUT"),
        id,
      ).toHaveLength(1);
    }
    // What the endpoint receives once the queue is sent (the worker sends only when told).
    worker = startWebhookDelivery({
      db: a.db,
      clock,
      log: pino({ level: "silent" }),
      everyMs: 24 * 3_600_000,
    });
    await worker.tick();
    const timedOut = receiver.delivered
      .flatMap(
        (h) =>
          (JSON.parse(h.body) as { data: { events: { details: Record<string, unknown> }[] } }).data.events,
      )
      .filter((e) => e.details.event === "interim_state_timed_out")
      .map((e) => e.details.command_id as string);
    expect(timedOut.sort()).toEqual([...ids].sort());
    expect(ids.map((id) => notices.get(id) ?? 0)).toEqual(ids.map(() => 1));
    // The devices went back to where they were, once each.
    const devices = await Promise.all(
      LOCKERS.map((alias) => deviceRepository(b.db).find(fx.device("L1", alias))),
    );
    expect(devices.every((d) => d?.state.value === "UNLOCKED" && d.command_id === null)).toBe(true);
  });
});
