import type { MqttClient } from "mqtt";
import pino from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { DEFAULT_COMMAND_TIMEOUTS } from "../../cloud/devices/timeouts.ts";
import { type GatewayLink, startGatewayLink } from "../../cloud/gateway-link/gateway-link.ts";
import { hardwareReportRepository } from "../../cloud/gateway-link/hardware-report-repository.ts";
import { connectMqtt } from "../../cloud/gateway-link/mqtt-client.ts";
import { applyManifest } from "../../cloud/manifest/apply-manifest.ts";
import { SiteManifest } from "../../cloud/manifest/manifest-schema.ts";
import { topicFor } from "../../shared/wire/topics.ts";
import { fixtureSecretHash } from "../support/cloud-harness.ts";
import { eventually } from "../support/eventually.ts";
import { FakeClock } from "../support/fake-clock.ts";
import { fixtureManifest, SECRET } from "../support/fixture-site.ts";
import { MOSQUITTO_URL } from "../support/site-harness.ts";
import { openReplicaDb, openTestDb, type TestDb } from "../support/test-db.ts";

/**
 * Two replicas of the cloud on one PostgreSQL store and Mosquitto, subscribed to the gateways' up
 * channels as one shared-subscription group: the broker hands each message to one of them.
 */
const log = pino({ level: process.env.TEST_LOG_LEVEL ?? "silent" });
const CLOUD = { username: "cloud", password: "cloud-test-password" };
const unique = () => Math.random().toString(36).slice(2, 10);

type Replica = { name: string; link: GatewayLink; store: TestDb; applied: number[] };

describe("replicas in one shared-subscription group on Mosquitto", () => {
  let replicas: Replica[] = [];
  let gateway: MqttClient | null = null;
  let store: TestDb | null = null;
  afterEach(async () => {
    await gateway?.endAsync(true);
    for (const r of replicas) await r.link.close();
    for (const r of replicas) await r.store.drop();
    await store?.drop();
    replicas = [];
    gateway = null;
    store = null;
  });

  /** The fixture site on a PostgreSQL store of the test's own, and a topic prefix of its own. */
  async function site() {
    store = await openTestDb("postgres");
    const clock = new FakeClock();
    await applyManifest(store.db, SiteManifest.parse(fixtureManifest(await fixtureSecretHash())), clock);
    return { store, clock, prefix: `r${unique()}` };
  }

  async function replica(
    s: Awaited<ReturnType<typeof site>>,
    name: string,
    shareGroup: string | undefined,
  ): Promise<Replica> {
    const own = await openReplicaDb(s.store);
    const applied: number[] = [];
    const link = await startGatewayLink(
      {
        brokerUrl: MOSQUITTO_URL,
        ...CLOUD,
        clientId: `cloud-${name}-${s.prefix}`,
        prefix: s.prefix,
        shareGroup,
      },
      {
        db: own.db,
        clock: s.clock,
        log,
        timeouts: DEFAULT_COMMAND_TIMEOUTS,
        onApplied: (_gw, channel) => channel === "up" && applied.push(applied.length),
      },
    );
    const r = { name, link, store: own, applied };
    replicas.push(r);
    return r;
  }

  /** Plays gw-a1: publishes hardware events numbered `seqs` and counts the cloud's acks per seq. */
  async function playGateway(prefix: string) {
    const c = connectMqtt(MOSQUITTO_URL, {
      clientId: `gw-a1-${unique()}`,
      username: "gw-a1",
      password: SECRET,
      reconnectPeriod: 0,
    });
    gateway = c;
    await new Promise<void>((resolve, reject) => {
      c.once("connect", () => resolve());
      c.once("error", reject);
    });
    const acks = new Map<number, number>();
    c.on("message", (_t, raw) => {
      for (const s of JSON.parse(raw.toString()).seqs as number[]) acks.set(s, (acks.get(s) ?? 0) + 1);
    });
    await c.subscribeAsync(topicFor(prefix, "gw-a1", "ack"), { qos: 1 });
    const send = async (seqs: number[]) => {
      for (const seq of seqs)
        await c.publishAsync(
          topicFor(prefix, "gw-a1", "up"),
          JSON.stringify({
            type: "hardware_event",
            gateway_id: "gw-a1",
            seq,
            observed_at: new Date().toISOString(),
            device_id: null,
            source: "bus0/1",
            event: "reset",
            detail: "",
          }),
          { qos: 1 },
        );
    };
    return { acks, send };
  }

  const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);
  const eventRows = async (db: TestDb) =>
    (await hardwareReportRepository(db.db).eventsOf("gw-a1"))
      .map(({ seq }) => ({ seq }))
      .sort((a, b) => a.seq - b.seq);

  it("handles each up message once, split between the replicas", async () => {
    const s = await site();
    const group = `g${unique()}`;
    const [a, b] = [await replica(s, "a", group), await replica(s, "b", group)];
    const gw = await playGateway(s.prefix);
    await gw.send(range(1, 40));
    await eventually(() => expect([...gw.acks.keys()].sort((x, y) => x - y)).toEqual(range(1, 40)));
    // Each was acknowledged once: no replica applied (or even looked at) what the other took.
    expect([...gw.acks.values()].every((n) => n === 1)).toBe(true);
    expect(a.applied.length + b.applied.length).toBe(40);
    expect(a.applied.length).toBeGreaterThan(0);
    expect(b.applied.length).toBeGreaterThan(0);
    expect((await eventRows(s.store)).map((r) => r.seq)).toEqual(range(1, 40));
  });

  it("without a group, each replica would handle every message (applied once thanks to the seq only)", async () => {
    const s = await site();
    const [a, b] = [await replica(s, "a", undefined), await replica(s, "b", undefined)];
    const gw = await playGateway(s.prefix);
    await gw.send(range(1, 10));
    await eventually(() => expect(a.applied.length + b.applied.length).toBe(20));
    await eventually(() => expect([...gw.acks.values()]).toEqual(range(1, 10).map(() => 2)));
    expect((await eventRows(s.store)).map((r) => r.seq)).toEqual(range(1, 10));
  });

  it("hands a dead replica's share to the live one at once: nothing waits in the dead one's session", async () => {
    const s = await site();
    const group = `g${unique()}`;
    const [a, b] = [await replica(s, "a", group), await replica(s, "b", group)];
    const gw = await playGateway(s.prefix);
    await gw.send(range(1, 6));
    await eventually(() => expect(gw.acks.size).toBe(6));
    // Replica a's connection drops (a crash); its reconnect waits on the fake clock, which stays put.
    const gone = new Promise<void>((r) => a.link.client.once("close", () => r()));
    a.link.client.stream.destroy();
    await gone;
    const before = a.applied.length;
    await gw.send(range(7, 30));
    // The broker may have handed a message to a before it read a's connection closing: that one is lost
    // with a, as what a crashed replica had taken is, and comes again from the gateway's outbox, which
    // sends what is unacknowledged again (every outbox_resend_s; here every second).
    let sentAt = Date.now();
    const resent = new Set<number>();
    await eventually(async () => {
      const missing = range(1, 30).filter((seq) => !gw.acks.has(seq));
      if (missing.length === 0) return;
      if (Date.now() - sentAt >= 1_000) {
        sentAt = Date.now();
        for (const seq of missing) resent.add(seq);
        await gw.send(missing);
      }
      throw new Error(`not acknowledged: ${missing.join(", ")}`);
    });
    // Nothing waited in a's session for it to come back: b took all of it, and the store has each once.
    // A session kept for a would have held every other message (the group deals them in turn), not the
    // one or two the broker may hand on while it learns of the close (the gateway awaits each PUBACK).
    expect(resent.size).toBeLessThanOrEqual(2);
    expect(a.applied.length).toBe(before);
    expect(b.applied.length).toBeGreaterThanOrEqual(30 - before);
    expect((await eventRows(s.store)).map((r) => r.seq)).toEqual(range(1, 30));
  });
});
