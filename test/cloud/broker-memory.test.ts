import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { applyManifest } from "../../cloud/manifest/apply-manifest.ts";
import { SiteManifest } from "../../cloud/manifest/manifest-schema.ts";
import { openDb } from "../../cloud/store/db.ts";
import { topicFor } from "../../shared/wire/topics.ts";
import { fixtureSecretHash } from "../support/cloud-harness.ts";
import { type CloudProcess, startCloudProcess } from "../support/cloud-process.ts";
import { FakeClock } from "../support/fake-clock.ts";
import { fixtureManifest, SECRET } from "../support/fixture-site.ts";
import { freePort } from "../support/private-mosquitto.ts";
import { hoardQos2, publishPacket, rawLogin, rssMb } from "../support/raw-mqtt.ts";

const PREFIX = "parking";
const HOARDER = { username: "gw-a1", password: SECRET, topic: topicFor(PREFIX, "gw-a1", "up") };

describe("the cloud's memory under a gateway hoarding QoS 2 messages", () => {
  let cloud: CloudProcess | undefined;
  let mqttPort = 0;
  let metricsPort = 0;

  beforeAll(async () => {
    mqttPort = await freePort();
    metricsPort = await freePort();
    cloud = await startCloudProcess(
      {
        MQTT_PORT: String(mqttPort),
        METRICS_PORT: String(metricsPort),
        MQTT_PASSWORD: "cloud-secret",
        MQTT_PREFIX: PREFIX,
        LOG_LEVEL: "error",
      },
      {
        async prepare(dataDir) {
          const db = await openDb({ kind: "sqlite", file: path.join(dataDir, "cloud.db") });
          await applyManifest(
            db,
            SiteManifest.parse(fixtureManifest(await fixtureSecretHash())),
            new FakeClock(),
          );
          await db.destroy();
        },
      },
    );
  });
  afterAll(async () => {
    await cloud?.stop();
  });

  it("refuses 2,000 unreleased QoS 2 messages over 20 reconnects with a kept session, and the cloud's RSS grows by under 20 MB", {
    timeout: 180_000,
  }, async () => {
    const pid = cloud?.child.pid;
    if (!pid) throw new Error("the cloud is not running");
    // Warm-up: the first logins and refusals compile their code paths. (Without the refusal the same
    // run took the cloud from 234 to 643 MB: aedes keeps every message until its PUBREL, per session.)
    await hoardQos2(mqttPort, HOARDER, 5, 20);
    const before = rssMb(pid);
    const run = await hoardQos2(mqttPort, HOARDER, 20, 100);
    const after = rssMb(pid);
    expect(run.sent).toBe(2_000);
    // Each connection was closed by the broker at its first QoS 2 header; none was acknowledged. (Fewer,
    // longer connections than the audit's: each costs the process a little garbage of its own.)
    expect(run).toMatchObject({ pubrecs: 0, closedByBroker: 20 });
    expect(after - before, `RSS ${before.toFixed(1)} → ${after.toFixed(1)} MB`).toBeLessThan(20);
    // Counted, warm-up included, on the cloud's metrics listener.
    const scraped = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
    expect(scraped).toContain('parking_cloud_mqtt_refused_total{reason="qos2"} 25');
    // The gateway's credentials still work (QoS 1 is the wire's).
    const s = await rawLogin(mqttPort, {
      clientId: "gw-a1",
      username: "gw-a1",
      password: SECRET,
      clean: true,
    });
    s.socket.write(publishPacket(topicFor(PREFIX, "gw-a1", "hb"), Buffer.from("{}"), 1, 1));
    expect([...(await s.receivedAtLeast(4)).subarray(0, 2)]).toEqual([0x40, 0x02]); // PUBACK
    s.end();
  });
});
