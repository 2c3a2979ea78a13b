import path from "node:path";
import type { Logger } from "pino";
import type { SiteManifest } from "../cloud/manifest/manifest-schema.ts";
import { parseGatewayConfig } from "../gateway/config.ts";
import { type RunningGateway, startGateway } from "../gateway/gateway.ts";
import { createSimSite, SIM_SCHEME, type SimSite } from "../hardware-sim/site.ts";
import { demoGatewayHardware, demoSimSpec, demoWiring } from "./demo-wiring.ts";

export type DemoGateways = { gateways: RunningGateway[]; sims: SimSite[]; stop(): Promise<void> };

/** Every gateway id of the manifest, in its order. */
export function manifestGatewayIds(m: SiteManifest): string[] {
  return m.operators.flatMap((op) => op.locations.flatMap((loc) => loc.gateways.map((gw) => gw.id)));
}

/**
 * For the demo only: one gateway daemon per gateway of the manifest, each on a simulated site whose lock
 * boards match the manifest's bus wiring and with an RFID reader at each door, named after the door's alias
 * (the gateway's reader of that name opens that door). The gateways and the simulator run in this process over
 * in-memory serial links; they talk to the cloud through the broker exactly as real ones do.
 */
export async function startDemoGateways(o: {
  manifest: SiteManifest;
  brokerUrl: string;
  prefix: string;
  secret: string;
  dataDir: string;
  log: Logger;
  /** Gateway ids not to run here (a gateway daemon of your own takes their place). */
  skip?: readonly string[];
}): Promise<DemoGateways> {
  const gateways: RunningGateway[] = [];
  const sims: SimSite[] = [];
  const stop = async () => {
    for (const g of gateways) await g.stop();
    for (const s of sims) await s.close();
  };
  try {
    await startAll();
  } catch (err) {
    await stop();
    throw err;
  }
  return { gateways, sims, stop };

  async function startAll() {
    for (const op of o.manifest.operators) {
      for (const loc of op.locations) {
        for (const gw of loc.gateways) {
          if (o.skip?.includes(gw.id)) continue;
          const wiring = demoWiring(gw);
          const sim = createSimSite(demoSimSpec(wiring));
          await sim.ready;
          sims.push(sim);
          const config = parseGatewayConfig({
            gateway_id: gw.id,
            secret: o.secret,
            broker: { url: o.brokerUrl, prefix: o.prefix },
            state_dir: path.join(o.dataDir, "gateways", gw.id),
            ...demoGatewayHardware(wiring, (name) => `${SIM_SCHEME}${name}`),
            log_level: "warn",
          });
          gateways.push(
            await startGateway({
              config,
              secret: o.secret,
              // The child adds gateway_id to every line of this gateway, once.
              log: o.log.child({ gateway_id: gw.id }),
              openLink: (p) => sim.linkFactory(p),
              camera: gw.camera ? sim.camera : null,
            }),
          );
        }
      }
    }
  }
}
