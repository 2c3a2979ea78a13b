import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { stringify as stringifyYaml } from "yaml";
import type { SiteManifest } from "../cloud/manifest/manifest-schema.ts";
import type { GatewayConfigInput } from "../gateway/config.ts";
import { demoGatewayHardware, demoSimSpec, demoWiring } from "./demo-wiring.ts";

/** What the demo writes for a gateway it leaves out, so a daemon of your own can take its place as is. */
export type SkippedGateway = {
  id: string;
  /** DEMO_GATEWAY_SECRET, owner-only: the gateway's broker password. */
  secretFile: string;
  /** The demo's own state directory for it: its outbox numbering carries on, parkctl --gateway looks here. */
  stateDir: string;
  /** A ready gateway config: this run's broker, the secret and state above, the simulator's paths below. */
  gatewayFile: string;
  /** The gateway's hardware for the standalone simulator, as the manifest wires it. */
  simFile: string;
  /** Where the simulator is to put its pseudo-terminals (`npm run sim -- --dir <simDir> <simFile>`). */
  simDir: string;
};

/**
 * Writes, under `<DATA_DIR>/gateways/<id>/`, the broker secret, a gateway config (gateway.yaml) and a
 * simulator scenario (sim.yaml) for a gateway the demo does not run. Every path in them is absolute, so
 * the commands the banner prints work from any directory and on any PORT, MQTT_PORT and DATA_DIR.
 */
export function writeSkippedGateway(o: {
  manifest: SiteManifest;
  id: string;
  dataDir: string;
  brokerUrl: string;
  prefix: string;
  secret: string;
}): SkippedGateway {
  const dataDir = path.resolve(o.dataDir);
  const stateDir = path.join(dataDir, "gateways", o.id);
  const simDir = path.join(dataDir, "sim", o.id);
  const files = {
    secretFile: path.join(stateDir, "secret"),
    gatewayFile: path.join(stateDir, "gateway.yaml"),
    simFile: path.join(stateDir, "sim.yaml"),
  };
  const gw = o.manifest.operators
    .flatMap((op) => op.locations.flatMap((loc) => loc.gateways))
    .find((g) => g.id === o.id);
  if (!gw) throw new Error(`the manifest has no gateway ${o.id}`);
  const wiring = demoWiring(gw);
  const config: GatewayConfigInput = {
    gateway_id: o.id,
    secret_file: files.secretFile,
    broker: { url: o.brokerUrl, prefix: o.prefix },
    state_dir: stateDir,
    ...demoGatewayHardware(wiring, (name) => path.join(simDir, name)),
    heartbeat_interval_s: 5,
    log_level: "info",
  };
  mkdirSync(stateDir, { recursive: true, mode: 0o700 });
  writeFileSync(files.secretFile, `${o.secret}\n`, { mode: 0o600 });
  const header = (what: string) =>
    `# ${what} for ${o.id}, written by the demo (DEMO_SKIP_GATEWAYS) for this run's ports and DATA_DIR.\n`;
  writeFileSync(files.gatewayFile, header("A gateway daemon's config") + stringifyYaml(config), {
    mode: 0o600,
  });
  writeFileSync(files.simFile, header("The simulated hardware") + stringifyYaml(demoSimSpec(wiring)));
  return { id: o.id, stateDir, simDir, ...files };
}

/** The banner's lines for a gateway left out: the two commands that run it yourself. */
export function skippedGatewayBannerLines(s: SkippedGateway, parkctl: string): string[] {
  return [
    `  Left out for a gateway daemon of your own: ${s.id} (DEMO_SKIP_GATEWAYS); files in ${s.stateDir}`,
    `    its hardware:  npm run sim -- --dir ${s.simDir} ${s.simFile}`,
    `    its daemon:    npm run dev:gateway -- --config ${s.gatewayFile}`,
    `    then:          ${parkctl} ${s.id} devices     (docs/walkthroughs.md, "Drive the standalone simulator")`,
  ];
}
