import { mkdirSync } from "node:fs";
import path from "node:path";
import type { Logger } from "pino";
import { type CloudConfig, loadCloudConfig } from "../cloud/config.ts";
import { applyManifest, derivedId } from "../cloud/manifest/apply-manifest.ts";
import { loadManifest } from "../cloud/manifest/load-manifest.ts";
import type { SiteManifest } from "../cloud/manifest/manifest-schema.ts";
import { type RunningCloud, startCloud } from "../cloud/server.ts";
import { passwordProblem } from "../cloud/staff/staff-service.ts";
import { didYouMean } from "../shared/cli/did-you-mean.ts";
import { PACKAGE_ROOT } from "../shared/node/package-root.ts";
import { systemClock } from "../shared/node/system-clock.ts";
import type { Clock } from "../shared/time/clock.ts";
import { type DemoGateways, manifestGatewayIds, startDemoGateways } from "./demo-gateways.ts";
import { createDemoPanel } from "./demo-panel.ts";
import {
  type DemoVerification,
  demoVerificationSecret,
  riderBannerLines,
  startDemoVerification,
  verificationSecretFrom,
  verificationUrlFrom,
} from "./demo-riders.ts";
import { declareDemoStaff, staffBannerLines } from "./demo-staff.ts";
import {
  type DemoWebhook,
  declareDemoWebhook,
  demoWebhookSettings,
  webhookBannerLines,
} from "./demo-webhooks.ts";
import { type SkippedGateway, skippedGatewayBannerLines, writeSkippedGateway } from "./standalone-gateway.ts";

/** The repository (as source or built): the demo manifest and `npm start`'s data directory are under it. */
export const REPO_ROOT = PACKAGE_ROOT;
export const DEMO_MANIFEST = path.join(REPO_ROOT, "manifests", "demo-site.yaml");

/** Defaults of the variables only the demo reads (README, Configuration). */
export const DEMO_DEFAULTS = {
  DATA_DIR: "./data/demo",
  DEMO_CLIENT_ID: "demo-client",
  DEMO_CLIENT_SECRET: "demo-secret-change-me",
  DEMO_GATEWAY_SECRET: "demo-gateway-secret",
  DEMO_CONSOLE_PASSWORD: "demo-console-password",
} as const;

type Env = Record<string, string | undefined>;

/** A bad demo variable, named like the cloud's own (exit 6). */
export class DemoConfigError extends Error {}

export type DemoSettings = {
  cfg: CloudConfig;
  env: Env;
  clientId: string;
  clientSecret: string;
  gatewaySecret: string;
  /** The demo console staff's password (DEMO_CONSOLE_PASSWORD). */
  consolePassword: string;
  /** Gateways of the manifest the demo leaves to a gateway daemon of your own (DEMO_SKIP_GATEWAYS). */
  skip: string[];
  /** Another verification server for the demo operator's riders (DEMO_VERIFICATION_URL), or null. */
  verificationUrl: string | null;
  /** The verification callbacks' signing secret (DEMO_VERIFICATION_SECRET), or null to keep one in DATA_DIR. */
  verificationSecret: string | null;
  /** DEMO_WEBHOOK_URL and DEMO_WEBHOOK_SECRET (demo/demo-webhooks.ts). */
  webhook: { url: string | null; secret: string | null };
};

/** Reads the demo's environment: the cloud's variables with the demo's defaults, and its own. */
export function demoSettings(processEnv: Env, manifest: SiteManifest): DemoSettings {
  const nonEmpty = (v: string | undefined) => (v === undefined || v === "" ? undefined : v);
  const env: Env = {
    DATA_DIR: DEMO_DEFAULTS.DATA_DIR,
    ...processEnv,
    DEMO_CLIENT_SECRET: nonEmpty(processEnv.DEMO_CLIENT_SECRET) ?? DEMO_DEFAULTS.DEMO_CLIENT_SECRET,
    DEMO_GATEWAY_SECRET: nonEmpty(processEnv.DEMO_GATEWAY_SECRET) ?? DEMO_DEFAULTS.DEMO_GATEWAY_SECRET,
    DEMO_CONSOLE_PASSWORD: nonEmpty(processEnv.DEMO_CONSOLE_PASSWORD) ?? DEMO_DEFAULTS.DEMO_CONSOLE_PASSWORD,
  };
  const consolePassword = env.DEMO_CONSOLE_PASSWORD as string;
  const weak = passwordProblem(consolePassword);
  if (weak) throw new DemoConfigError(`DEMO_CONSOLE_PASSWORD: ${weak}`);
  const clientSecret = env.DEMO_CLIENT_SECRET as string;
  const gatewaySecret = env.DEMO_GATEWAY_SECRET as string;
  // A gateway refuses a broker password of fewer than 8 characters in its config: say so up front.
  if (gatewaySecret.length < 8)
    throw new DemoConfigError("DEMO_GATEWAY_SECRET: at least 8 characters (a gateway's broker password)");
  const known = manifestGatewayIds(manifest);
  const skip = (env.DEMO_SKIP_GATEWAYS ?? "").split(/[\s,]+/).filter(Boolean);
  for (const id of skip)
    if (!known.includes(id))
      throw new DemoConfigError(
        `DEMO_SKIP_GATEWAYS: the demo has no gateway ${id}${didYouMean(id, known)}; its gateways: ${known.join(", ")}`,
      );
  const verificationUrl = verificationUrlFrom(nonEmpty(processEnv.DEMO_VERIFICATION_URL));
  if (typeof verificationUrl === "object" && verificationUrl !== null)
    throw new DemoConfigError(verificationUrl.problem);
  const verificationSecret = verificationSecretFrom(nonEmpty(processEnv.DEMO_VERIFICATION_SECRET));
  if (typeof verificationSecret === "object" && verificationSecret !== null)
    throw new DemoConfigError(verificationSecret.problem);
  const webhook = demoWebhookSettings(processEnv);
  if ("problem" in webhook) throw new DemoConfigError(webhook.problem);
  return {
    cfg: loadCloudConfig(env),
    env,
    clientId: nonEmpty(processEnv.DEMO_CLIENT_ID) ?? DEMO_DEFAULTS.DEMO_CLIENT_ID,
    clientSecret,
    gatewaySecret,
    consolePassword,
    skip: [...new Set(skip)],
    verificationUrl,
    verificationSecret,
    webhook,
  };
}

export type RunningDemo = {
  cloud: RunningCloud;
  gateways: DemoGateways;
  settings: DemoSettings;
  manifest: SiteManifest;
  /** For each gateway left out: the files the demo wrote for a gateway daemon of your own. */
  skipped: SkippedGateway[];
  /** Where the demo operator's riders are verified. */
  verification: DemoVerification;
  /** Where the demo operator's webhooks go (DEMO_WEBHOOK_URL), or null. */
  webhook: DemoWebhook | null;
  stop(): Promise<void>;
};

/**
 * `npm start`: the cloud on SQLite in DATA_DIR (./data/demo) with the embedded broker, the demo site
 * manifest, and a gateway daemon per manifest gateway on the simulator, all in this process. A gateway
 * named in DEMO_SKIP_GATEWAYS is left out, so a standalone gateway (npm run dev:gateway) can take its
 * place; its broker secret, a gateway config and a simulator scenario for it are written to
 * `<DATA_DIR>/gateways/<id>/` (demo/standalone-gateway.ts).
 */
export async function startDemo(o: {
  env?: Env;
  log: Logger;
  clock?: Clock;
  manifestFile?: string;
}): Promise<RunningDemo> {
  const manifest = loadManifest(o.manifestFile ?? DEMO_MANIFEST);
  const settings = demoSettings(o.env ?? process.env, manifest);
  const client = manifest.operators[0]?.clients[0];
  if (client) client.client_id = settings.clientId;
  const { cfg } = settings;
  mkdirSync(cfg.DATA_DIR, { recursive: true, mode: 0o700 }); // holds the store and secrets: owner only
  const verification = await startDemoVerification(
    manifest,
    settings.verificationUrl,
    demoVerificationSecret(settings.verificationSecret, cfg.DATA_DIR),
    o.clock,
  );
  const webhook = declareDemoWebhook(manifest, settings.webhook);
  declareDemoStaff(manifest);
  // The console's demo hardware panel: handed to the cloud now, attached once the gateways run.
  const panel = createDemoPanel(manifest);

  const cloud = await startCloud(cfg, {
    log: o.log,
    clock: o.clock,
    demoHardware: panel.hardware,
    beforeListen: async (db) => {
      await applyManifest(db, manifest, o.clock ?? systemClock, settings.env);
    },
  }).catch(async (err: unknown) => {
    await verification.server?.stop();
    throw err;
  });
  let gateways: DemoGateways;
  try {
    gateways = await startDemoGateways({
      manifest,
      brokerUrl: cloud.mqttUrl,
      prefix: cfg.MQTT_PREFIX,
      secret: settings.gatewaySecret,
      dataDir: cfg.DATA_DIR,
      log: o.log,
      skip: settings.skip,
    });
  } catch (err) {
    await cloud.stop();
    await verification.server?.stop();
    throw err;
  }
  panel.attach({ manifest, gateways });
  const skipped = settings.skip.map((id) =>
    writeSkippedGateway({
      manifest,
      id,
      dataDir: cfg.DATA_DIR,
      brokerUrl: cloud.mqttUrl,
      prefix: cfg.MQTT_PREFIX,
      secret: settings.gatewaySecret,
    }),
  );
  return {
    cloud,
    gateways,
    settings,
    manifest,
    skipped,
    verification,
    webhook,
    async stop() {
      await gateways.stop();
      await cloud.stop();
      await verification.server?.stop();
    },
  };
}

/** The first locker of the demo, for the printed example. */
export function demoLocker(m: SiteManifest): {
  id: string;
  alias: string;
  location: string;
  gateway: string;
} {
  for (const op of m.operators) {
    for (const loc of op.locations) {
      const locationId = loc.id ?? derivedId(op.id, "location", loc.code);
      for (const gw of loc.gateways) {
        const d = gw.devices.find((x) => x.type === "LOCKER");
        if (d)
          return {
            id: d.id ?? derivedId(locationId, "device", d.alias),
            alias: d.alias,
            location: loc.code,
            gateway: gw.id,
          };
      }
    }
  }
  throw new Error("the demo manifest has no locker");
}

/** The demo's access lists (fixed ids in the manifest), for the printed example. */
export function demoAccessLists(
  m: SiteManifest,
): { id: string; kind: string; name: string; location: string }[] {
  return m.operators.flatMap((op) =>
    op.locations.flatMap((loc) => loc.access_lists.map((l) => ({ ...l, location: loc.code }))),
  );
}

/** What `npm start` prints: where everything is and a command to try for each part. */
export function demoBanner(demo: RunningDemo): string {
  const { cloud, settings } = demo;
  const base = cloud.baseUrl;
  const locker = demoLocker(demo.manifest);
  const { clientId, clientSecret } = settings;
  // parkctl finds the demo's gateways under data/demo by itself; another DATA_DIR has to be passed on.
  const dataDir = settings.cfg.DATA_DIR;
  const sameDir = path.resolve(REPO_ROOT, dataDir) === path.resolve(REPO_ROOT, DEMO_DEFAULTS.DATA_DIR);
  const parkctl = `${sameDir ? "" : `DATA_DIR=${path.resolve(dataDir)} `}npm run parkctl -- --gateway`;
  const running = demo.gateways.gateways.map((g) => g.config.gateway_id);
  const width = Math.max(0, ...running.map((id) => id.length));
  const lines = [
    "",
    "Parking cloud demo is running.",
    `  API base URL   ${base}   (docs: ${base}/docs, OpenAPI: ${base}/openapi.json)`,
    `  MQTT broker    ${cloud.mqttUrl}`,
    `  Client id      ${clientId}`,
    `  Client secret  ${clientSecret}`,
    `  Data           ${path.resolve(dataDir)}`,
    "",
    "  Get a token:",
    `    curl -s -u '${clientId}:${clientSecret}' -d grant_type=client_credentials ${base}/oauth2/token`,
    "  Public map (no auth):",
    `    curl -s ${base}/location/v1/public-areas/demo-city/locations`,
  ];
  if (running.includes(locker.gateway) || demo.skipped.some((s) => s.id === locker.gateway))
    lines.push(
      `  Lock locker ${locker.alias} of ${locker.location} (gateway ${locker.gateway} drives its lock board):`,
      `    curl -s -H "Authorization: Bearer $TOKEN" -H 'content-type: application/json' -d '{"command":"lock"}' ${base}/device/v1/devices/${locker.id}/commands`,
    );
  for (const list of demoAccessLists(demo.manifest))
    lines.push(
      `  Access list "${list.name}" (${list.kind}) of ${list.location}: ${list.id}`,
      `    curl -s -H "Authorization: Bearer $TOKEN" ${base}/access-control/v1/mgmt/access-lists/${list.id}/users`,
    );
  lines.push(...riderBannerLines(base, demo.verification, demo.manifest));
  lines.push(...webhookBannerLines(demo.webhook));
  lines.push(...staffBannerLines(base, settings.consolePassword));
  lines.push(`  Gateways running on the simulator: ${running.join(", ") || "none"}`);
  for (const g of demo.gateways.gateways) {
    const id = g.config.gateway_id;
    lines.push(`    ${id.padEnd(width)}  ${parkctl} ${id} devices`);
  }
  for (const s of demo.skipped) lines.push(...skippedGatewayBannerLines(s, parkctl));
  lines.push("");
  return lines.join("\n");
}
