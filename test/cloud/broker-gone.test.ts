import pino from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { DEFAULT_COMMAND_TIMEOUTS } from "../../cloud/devices/timeouts.ts";
import { type GatewayLink, startGatewayLink } from "../../cloud/gateway-link/gateway-link.ts";
import { connectMqtt } from "../../cloud/gateway-link/mqtt-client.ts";
import { applyManifest } from "../../cloud/manifest/apply-manifest.ts";
import { SiteManifest } from "../../cloud/manifest/manifest-schema.ts";
import { MqttBrokerLink } from "../../gateway/adapters/mqtt/broker-mqtt.ts";
import type { Status } from "../../shared/wire/messages.ts";
import { topicFor } from "../../shared/wire/topics.ts";
import { fixtureSecretHash } from "../support/cloud-harness.ts";
import { cpuWhileIdle } from "../support/cpu-window.ts";
import { FakeClock } from "../support/fake-clock.ts";
import { fixtureManifest } from "../support/fixture-site.ts";
import { startPrivateMosquitto } from "../support/private-mosquitto.ts";
import { Signal } from "../support/signal.ts";
import { openTestDb, type TestDb } from "../support/test-db.ts";

/** A logger that keeps the waits announced by "broker unreachable: retrying", and says when one arrives. */
function retryLog() {
  const waits: number[] = [];
  const more = new Signal();
  const log = pino(
    { level: "info" },
    {
      write(line: string) {
        const entry = JSON.parse(line) as { msg?: string; retry_in_ms?: number };
        if (entry.msg !== "broker unreachable: retrying" || entry.retry_in_ms === undefined) return;
        waits.push(entry.retry_in_ms);
        more.notify();
      },
    },
  );
  return { log, waits, until: (done: () => boolean) => more.until(done) };
}

/**
 * A minute without the broker, on the fake clock: each attempt is let run as soon as it is due, and the
 * next wait is awaited before time moves on. Returns how many attempts were made.
 */
async function aMinuteAway(clock: FakeClock, retries: ReturnType<typeof retryLog>): Promise<number> {
  await retries.until(() => retries.waits.length > 0);
  const first = retries.waits.length;
  let elapsed = 0;
  while (elapsed < 60_000) {
    const scheduled = retries.waits.length;
    const wait = retries.waits[scheduled - 1] as number;
    clock.advance(wait);
    elapsed += wait;
    await retries.until(() => retries.waits.length > scheduled);
  }
  return retries.waits.length - first;
}

describe("when the broker goes away for a minute", () => {
  const cleanups: (() => Promise<unknown>)[] = [];

  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  it("the gateway retries a few times a minute, never faster than its backoff, idle meanwhile, and is back once the broker is", async () => {
    const mosquitto = await startPrivateMosquitto();
    cleanups.push(() => mosquitto.stop());
    const clock = new FakeClock();
    const retries = retryLog();
    const link = new MqttBrokerLink({
      url: mosquitto.url,
      prefix: "gone",
      gatewayId: "gw-gone",
      password: "unused",
      clock,
      log: retries.log,
      jitter: () => 1, // every wait at its bound: the count below is exact
    });
    cleanups.push(() => link.stop());
    const seen = { connected: 0, disconnected: 0 };
    const changed = new Signal();
    link.on("connected", () => {
      seen.connected++;
      changed.notify();
    });
    link.on("disconnected", () => {
      seen.disconnected++;
      changed.notify();
    });
    link.start();
    await changed.until(() => seen.connected === 1);

    await mosquitto.kill();
    await changed.until(() => seen.disconnected === 1);
    const attempts = await aMinuteAway(clock, retries);
    // 1 s doubling to a 30 s cap: 1 + 2 + 4 + 8 + 16 + 30 s.
    expect(attempts).toBeGreaterThanOrEqual(4);
    expect(attempts).toBeLessThanOrEqual(8);
    expect(Math.max(...retries.waits)).toBeLessThanOrEqual(30_000);
    expect(link.connected).toBe(false);
    expect(await cpuWhileIdle()).toBeLessThan(100);

    await mosquitto.restart();
    clock.advance(retries.waits.at(-1) as number);
    await changed.until(() => seen.connected === 2);
    expect(link.connected).toBe(true);
  });

  it("the cloud retries a few times a minute, idle meanwhile, and listens to its gateways again once the broker is back", async () => {
    const mosquitto = await startPrivateMosquitto();
    cleanups.push(() => mosquitto.stop());
    const store: TestDb = await openTestDb();
    cleanups.push(() => store.drop());
    const clock = new FakeClock();
    await applyManifest(store.db, SiteManifest.parse(fixtureManifest(await fixtureSecretHash())), clock);
    const retries = retryLog();
    const applied: string[] = [];
    const more = new Signal();
    const prefix = "gone";
    const link: GatewayLink = await startGatewayLink(
      { brokerUrl: mosquitto.url, clientId: "cloud-gone", prefix },
      {
        db: store.db,
        clock,
        log: retries.log,
        timeouts: DEFAULT_COMMAND_TIMEOUTS,
        onApplied: (gatewayId, channel) => {
          applied.push(`${gatewayId} ${channel}`);
          more.notify();
        },
      },
    );
    cleanups.push(() => link.close());
    const closes = { n: 0 };
    link.client.on("close", () => closes.n++);

    await mosquitto.kill();
    const attempts = await aMinuteAway(clock, retries);
    // 0.5 s doubling to a 10 s cap: ten attempts in the minute.
    expect(attempts).toBeGreaterThanOrEqual(5);
    expect(attempts).toBeLessThanOrEqual(12);
    expect(Math.max(...retries.waits)).toBeLessThanOrEqual(10_000);
    // The drop, then one failed connection per attempt: none on top of the scheduled ones.
    expect(closes.n).toBe(attempts + 1);
    expect(await cpuWhileIdle()).toBeLessThan(100);

    // Back without persistence: the broker forgot the cloud's session and subscriptions. A gateway's
    // retained status reaches the cloud only if it subscribed again.
    await mosquitto.restart();
    const reconnected = new Promise<void>((r) => link.client.once("connect", () => r()));
    clock.advance(retries.waits.at(-1) as number);
    await reconnected;
    const gateway = connectMqtt(mosquitto.url, { clientId: "gw-a1", reconnectPeriod: 0 });
    cleanups.push(() => gateway.endAsync(true));
    await new Promise<void>((r) => gateway.once("connect", () => r()));
    const status: Status = { gateway_id: "gw-a1", online: true, at: clock.now().toISOString() };
    await gateway.publishAsync(topicFor(prefix, "gw-a1", "status"), JSON.stringify(status), {
      qos: 1,
      retain: true,
    });
    await more.until(() => applied.includes("gw-a1 status"));
  });
});
