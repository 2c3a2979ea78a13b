import pino from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { applyManifest } from "../../cloud/manifest/apply-manifest.ts";
import { SiteManifest } from "../../cloud/manifest/manifest-schema.ts";
import { createConnectionWatch } from "../../cloud/site-events/connection-watch.ts";
import { startWebhookDelivery, type WebhookDelivery } from "../../cloud/webhooks/webhook-delivery.ts";
import { DEAD_AFTER_MS } from "../../shared/domain/health.ts";
import { type CloudHarness, fixtureSecretHash, startCloudHarness } from "../support/cloud-harness.ts";
import { fixtureManifest, fx, OP_A } from "../support/fixture-site.ts";
import { WebhookReceiver } from "../support/webhook-receiver.ts";

/**
 * Where site events come from (cloud/site-events): derived health → connection and connection_confirmed,
 * a gateway's hardware events → alarm and status, an interim state past its deadline → status. Operator A
 * has a direct webhook endpoint for every type, so each event becomes a message at once, which the
 * delivery worker sends to the test's receiver.
 */

const HOOK = "5e5e5e5e-0000-4000-8000-000000000001";
const GW = "gw-a1";
const log = pino({ level: "silent" });
const L1_DEVICES = ["1", "2", "3", "4", "5"].map((a) => fx.device("L1", a));
/** A heartbeat also tells of the gateway itself: its GUARD device. */
const HEARD = [...L1_DEVICES, fx.guard(GW)];

type Event = {
  type: string;
  device_id: string | null;
  location_id: string | null;
  details: Record<string, unknown>;
};

describe("site events", () => {
  let h: CloudHarness;
  let receiver: WebhookReceiver;
  let worker: WebhookDelivery;
  let seq = 0;
  beforeEach(async () => {
    h = await startCloudHarness();
    receiver = await new WebhookReceiver(() => h.clock.now()).start();
    // Sends only when told (`messages`): every message queued so far, in queue order.
    worker = startWebhookDelivery({ db: h.db, clock: h.clock, log, everyMs: 24 * 3_600_000 });
    const m = fixtureManifest(await fixtureSecretHash());
    const op = m.operators.find((o) => o.id === OP_A);
    if (!op) throw new Error("fixture operator A");
    op.webhooks = [
      {
        id: HOOK,
        url: receiver.url,
        allow_private: true,
        secret: `whsec_${Buffer.alloc(32, 7).toString("base64")}`,
        delivery: "direct",
      },
    ];
    await applyManifest(h.db, SiteManifest.parse(m), h.clock);
  });
  afterEach(async () => {
    await worker.stop();
    await receiver.stop();
    await h.close();
  });

  /** The webhook messages the site events made so far, as operator A's endpoint receives them. */
  async function messages(): Promise<{ type: string; events: Event[] }[]> {
    await worker.tick();
    return receiver.delivered.map((r) => {
      const payload = JSON.parse(r.body) as { type: string; data: { events: Event[] } };
      return { type: payload.type, events: payload.data.events };
    });
  }

  const heartbeat = () =>
    h.heartbeat({
      gateway_id: GW,
      sent_at: h.clock.now().toISOString(),
      devices: L1_DEVICES.map((device_id) => ({ device_id, reachable: true })),
    });

  const hardwareEvent = (event: "tamper" | "door_held_open" | "door_opened", deviceId: string) =>
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

  it("a device going offline and online again: one connection event each way, on first sight none", async () => {
    const watch = createConnectionWatch({ db: h.db, clock: h.clock, log });
    await heartbeat();
    expect(await watch.check()).toBe(0);
    h.clock.advance(DEAD_AFTER_MS + 1_000);
    // Two replicas running the watch notify each change once.
    const other = createConnectionWatch({ db: h.db, clock: h.clock, log });
    const [a, b] = await Promise.all([watch.check(), other.check()]);
    expect(a + b).toBe(HEARD.length);
    const offline = (await messages()).filter((m) => m.type === "connection");
    expect(offline.flatMap((m) => m.events.map((e) => e.device_id)).sort()).toEqual([...HEARD].sort());
    expect(offline[0]?.events[0]?.details).toMatchObject({ online: false });
    expect(await watch.check()).toBe(0);
    await heartbeat();
    expect(await watch.check()).toBe(HEARD.length);
    const last = (await messages()).at(-1);
    expect(last?.events[0]?.details).toMatchObject({ online: true });
  });

  it("a location offline for 2 hours is confirmed once, with when it went offline", async () => {
    const watch = createConnectionWatch({ db: h.db, clock: h.clock, log });
    await heartbeat();
    await watch.check();
    h.clock.advance(DEAD_AFTER_MS + 60_000);
    await watch.check();
    expect((await messages()).some((m) => m.type === "connection_confirmed")).toBe(false);
    h.clock.advance(2 * 3_600_000);
    expect(await watch.check()).toBe(1);
    expect(await watch.check()).toBe(0);
    const confirmed = (await messages()).filter((m) => m.type === "connection_confirmed");
    expect(confirmed).toHaveLength(1);
    expect(confirmed[0]?.events[0]).toMatchObject({ location_id: fx.location("L1"), device_id: null });
    expect(confirmed[0]?.events[0]?.details.offline_since).toEqual(expect.any(String));
  });

  it("a tamper switch raises an alarm and a door held open a status; a door merely opening raises nothing", async () => {
    const locker = fx.device("L1", "1");
    await hardwareEvent("door_opened", locker);
    expect(await messages()).toEqual([]);
    await hardwareEvent("tamper", locker);
    await hardwareEvent("door_held_open", locker);
    const got = await messages();
    expect(got.map((m) => m.type)).toEqual(["alarm", "status"]);
    expect(got[0]?.events[0]).toMatchObject({
      device_id: locker,
      location_id: fx.location("L1"),
      details: { event: "tamper", alias: "1", device_type: "LOCKER" },
    });
    expect(got[1]?.events[0]?.details).toMatchObject({ event: "door_held_open" });
  });

  it("an interim state that times out raises a status event with the command", async () => {
    const locker = fx.device("L1", "2");
    const res = await h.call("a-admin", {
      method: "POST",
      url: `/device/v1/devices/${locker}/commands`,
      payload: { command: "lock" },
    });
    expect(res.statusCode, res.body).toBe(200);
    h.clock.advance(10 * 60_000);
    await h.sweep();
    const status = (await messages()).filter((m) => m.type === "status");
    expect(status).toHaveLength(1);
    expect(status[0]?.events[0]).toMatchObject({
      device_id: locker,
      details: { event: "interim_state_timed_out", command_id: res.json().id, command: "lock" },
    });
  });
});
