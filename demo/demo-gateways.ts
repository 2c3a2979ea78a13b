import path from "node:path";
import type { Logger } from "pino";
import type { SiteManifest } from "../cloud/manifest/manifest-schema.ts";
import { parseGatewayConfig } from "../gateway/config.ts";
import { type RunningGateway, startGateway } from "../gateway/gateway.ts";
import { createSimSite, SIM_SCHEME, type SimSite } from "../hardware-sim/site.ts";

export type DemoGateways = { gateways: RunningGateway[]; sims: SimSite[]; stop(): Promise<void> };

/** The one lock bus of every demo gateway's simulated site. */
export const DEMO_BUS = "bus0";
/** A power-saving demo device falls asleep after this long without activity (and wakes in 800 ms). */
const DEMO_IDLE_MS = 120_000;

export const isDoorType = (type: string): boolean => type === "BIKE_HOUSE_DOOR" || type === "DOOR";

/** The simulated reader at a door: named after the door's alias (made path-safe, as sim names must be). */
export function demoReaderName(alias: string): string {
  return alias.replace(/[^A-Za-z0-9_.-]/g, "_");
}

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
          const boards = new Map<
            number,
            { channels: number; doors: number[]; light: number[]; deep: number[] }
          >();
          for (const d of gw.devices) {
            if (!d.bus) continue;
            const b = boards.get(d.bus.board) ?? { channels: 1, doors: [], light: [], deep: [] };
            b.channels = Math.max(b.channels, d.bus.channel);
            if (isDoorType(d.type)) b.doors.push(d.bus.channel);
            // Power save as the manifest declares it: REMOTE_WAKEUP dozes lightly, LOCAL_WAKEUP deeply.
            if (d.power_save_strategy === "REMOTE_WAKEUP") b.light.push(d.bus.channel);
            if (d.power_save_strategy === "LOCAL_WAKEUP") b.deep.push(d.bus.channel);
            boards.set(d.bus.board, b);
          }
          const doorAliases = gw.devices.filter((d) => isDoorType(d.type)).map((d) => d.alias);
          const sim = createSimSite({
            moveMs: 300,
            readers: Object.fromEntries(doorAliases.map((alias) => [demoReaderName(alias), {}])),
            buses: boards.size
              ? {
                  [DEMO_BUS]: {
                    // Free lockers and docks at power-up (their latch open), door locks engaged.
                    boards: [...boards].map(([address, b]) => ({
                      address,
                      channels: b.channels,
                      doors: b.doors,
                      latch: "unlocked" as const,
                      powerSave: { light: b.light, deep: b.deep, idleMs: DEMO_IDLE_MS, wakeMs: 800 },
                    })),
                  },
                }
              : {},
          });
          await sim.ready;
          sims.push(sim);
          const config = parseGatewayConfig({
            gateway_id: gw.id,
            secret: o.secret,
            broker: { url: o.brokerUrl, prefix: o.prefix },
            state_dir: path.join(o.dataDir, "gateways", gw.id),
            buses: boards.size
              ? [{ name: DEMO_BUS, path: `${SIM_SCHEME}${DEMO_BUS}`, boards: [...boards.keys()] }]
              : [],
            readers: doorAliases.map((alias) => ({
              id: alias,
              path: `${SIM_SCHEME}${demoReaderName(alias)}`,
              device_alias: alias,
            })),
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
