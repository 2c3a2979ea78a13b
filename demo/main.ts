import path from "node:path";
import { fileURLToPath } from "node:url";
import type { Logger } from "pino";
import { loadCloudConfig } from "../cloud/config.ts";
import { applyManifest, derivedId } from "../cloud/manifest/apply-manifest.ts";
import { loadManifest } from "../cloud/manifest/load-manifest.ts";
import type { SiteManifest } from "../cloud/manifest/manifest-schema.ts";
import { startCloud } from "../cloud/server.ts";
import { systemClock } from "../shared/clock.ts";
import { startDemoGateways } from "./demo-gateways.ts";

const here = path.dirname(fileURLToPath(import.meta.url));

/**
 * `npm start`: the whole system on embedded defaults — SQLite in ./data/demo, the embedded MQTT broker,
 * the cloud API, and the demo site manifest. Prints where to reach it and how to authenticate.
 */
async function main() {
  const env = {
    DATA_DIR: "./data/demo",
    ...process.env,
    DEMO_CLIENT_SECRET: process.env.DEMO_CLIENT_SECRET ?? "demo-secret-change-me",
    DEMO_GATEWAY_SECRET: process.env.DEMO_GATEWAY_SECRET ?? "demo-gateway-secret",
  };
  const clientId = process.env.DEMO_CLIENT_ID ?? "demo-client";
  const cfg = loadCloudConfig(env);
  const manifest = loadManifest(path.join(here, "..", "manifests", "demo-site.yaml"));
  const client = manifest.operators[0]?.clients[0];
  if (client) client.client_id = clientId;

  const cloud = await startCloud(cfg, {
    beforeListen: async (db) => {
      await applyManifest(db, manifest, systemClock, env);
    },
  });
  const demo = await startDemoGateways({
    manifest,
    brokerUrl: cloud.mqttUrl,
    prefix: cfg.MQTT_PREFIX,
    secret: env.DEMO_GATEWAY_SECRET,
    dataDir: cfg.DATA_DIR,
    log: cloud.app.log as unknown as Logger,
  });
  const locker = demoLocker(manifest);
  const base = cloud.baseUrl;
  process.stdout.write(
    [
      "",
      "Parking cloud demo is running.",
      `  API base URL   ${base}   (docs: ${base}/docs, OpenAPI: ${base}/openapi.json)`,
      `  MQTT broker    ${cloud.mqttUrl}`,
      `  Client id      ${clientId}`,
      `  Client secret  ${env.DEMO_CLIENT_SECRET}`,
      "",
      "  Get a token:",
      `    curl -s -u '${clientId}:${env.DEMO_CLIENT_SECRET}' -d grant_type=client_credentials ${base}/oauth2/token`,
      "  Public map (no auth):",
      `    curl -s ${base}/location/v1/public-areas/demo-city/locations`,
      `  Lock locker ${locker.alias} of ${locker.location} (its gateway drives a simulated lock board):`,
      `    curl -s -H "Authorization: Bearer $TOKEN" -H 'content-type: application/json' -d '{"command":"lock"}' ${base}/device/v1/devices/${locker.id}/commands`,
      `  Gateways running on the simulator: ${demo.gateways.map((g) => g.config.gateway_id).join(", ")}`,
      "",
    ].join("\n"),
  );
  const stop = async () => {
    await demo.stop();
    await cloud.stop();
    process.exit(0);
  };
  process.once("SIGTERM", () => void stop());
  process.once("SIGINT", () => void stop());
}

/** The first locker of the demo, for the printed example. */
function demoLocker(m: SiteManifest): { id: string; alias: string; location: string } {
  for (const op of m.operators) {
    for (const loc of op.locations) {
      const locationId = loc.id ?? derivedId(op.id, "location", loc.code);
      for (const gw of loc.gateways) {
        const d = gw.devices.find((x) => x.type === "LOCKER");
        if (d)
          return { id: d.id ?? derivedId(locationId, "device", d.alias), alias: d.alias, location: loc.code };
      }
    }
  }
  throw new Error("the demo manifest has no locker");
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
