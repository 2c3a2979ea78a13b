import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadManifest } from "../../cloud/manifest/load-manifest.ts";
import { listWebhookEndpoints } from "../../cloud/webhooks/operator-commands.ts";
import { recordSiteEvent } from "../../cloud/webhooks/site-events.ts";
import {
  DEMO_MANIFEST,
  DemoConfigError,
  demoBanner,
  demoSettings,
  type RunningDemo,
  startDemo,
} from "../../demo/demo.ts";
import { generateWebhookSecret } from "../../demo/demo-webhooks.ts";
import { eventually } from "../support/eventually.ts";
import { WebhookReceiver } from "../support/webhook-receiver.ts";

const ALL_GATEWAYS = "gw-cs-lockers,gw-ms-docks,gw-hb-house,gw-pk-house";
const ENV = { DEMO_CLIENT_SECRET: "x".repeat(12), DEMO_GATEWAY_SECRET: "y".repeat(12) };

describe("DEMO_WEBHOOK_URL and DEMO_WEBHOOK_SECRET", () => {
  it("are checked before anything starts, naming the variable", () => {
    const manifest = loadManifest(DEMO_MANIFEST, ENV);
    expect(demoSettings({}, manifest).webhook).toEqual({ url: null, secret: null });
    for (const env of [
      { DEMO_WEBHOOK_URL: "ftp://127.0.0.1/" },
      { DEMO_WEBHOOK_URL: "not a url" },
      { DEMO_WEBHOOK_URL: "http://127.0.0.1:9000/", DEMO_WEBHOOK_SECRET: "not-a-whsec-secret" },
    ])
      expect(() => demoSettings(env, manifest), JSON.stringify(env)).toThrow(DemoConfigError);
    const secret = generateWebhookSecret();
    expect(
      demoSettings({ DEMO_WEBHOOK_URL: "http://127.0.0.1:9000/", DEMO_WEBHOOK_SECRET: secret }, manifest)
        .webhook,
    ).toEqual({ url: "http://127.0.0.1:9000/", secret });
  });
});

describe("the demo's webhook (npm start with DEMO_WEBHOOK_URL)", () => {
  let dir: string;
  let demo: RunningDemo;
  const receiver = new WebhookReceiver(() => new Date());
  beforeAll(async () => {
    await receiver.start();
    dir = await mkdtemp(join(tmpdir(), "demo-webhooks-"));
    demo = await startDemo({
      env: {
        PORT: "0",
        MQTT_PORT: "0",
        DATA_DIR: dir,
        DEMO_SKIP_GATEWAYS: ALL_GATEWAYS,
        DEMO_WEBHOOK_URL: receiver.url,
      },
      log: pino({ level: process.env.TEST_LOG_LEVEL ?? "silent" }),
    });
  });
  afterAll(async () => {
    await demo?.stop();
    await receiver.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it("registers the address for the demo operator with direct delivery, and prints the generated secret", async () => {
    const webhook = demo.webhook;
    if (!webhook) throw new Error("no demo webhook");
    expect(webhook.generated).toBe(true);
    expect(demoBanner(demo)).toContain(`signing secret ${webhook.secret}`);
    const [endpoint] = await listWebhookEndpoints(demo.cloud.db);
    expect(endpoint).toMatchObject({ url: receiver.url, delivery: "direct", enabled: true });

    // The cloud process delivers it by itself, on its own clock's ticks.
    const operatorId = demo.manifest.operators[0]?.id as string;
    await recordSiteEvent(demo.cloud.db, {
      operatorId,
      type: "alarm",
      data: { alarm: "tamper" },
      at: new Date(),
    });
    await eventually(() => expect(receiver.delivered).toHaveLength(1));
    const [r] = receiver.delivered;
    if (!r) throw new Error("nothing delivered");
    const headers = {
      "webhook-id": String(r.headers["webhook-id"]),
      "webhook-timestamp": String(r.headers["webhook-timestamp"]),
      "webhook-signature": String(r.headers["webhook-signature"]),
    };
    expect(new Webhook(webhook.secret).verify(r.body, headers)).toMatchObject({
      type: "alarm",
      data: { events: [{ details: { alarm: "tamper" } }] },
    });
  });
});
