import type { SiteManifest } from "../cloud/manifest/manifest-schema.ts";
import type { GatewayConfigInput } from "../gateway/config.ts";
import type { SimSiteSpec } from "../hardware-sim/site.ts";

type ManifestGateway = SiteManifest["operators"][number]["locations"][number]["gateways"][number];

/** The one lock bus of every demo gateway's simulated site. */
export const DEMO_BUS = "bus0";
/** A power-saving demo device falls asleep after this long without activity (and wakes in 800 ms). */
const DEMO_IDLE_MS = 120_000;

export const isDoorType = (type: string): boolean => type === "BIKE_HOUSE_DOOR" || type === "DOOR";

/** The simulated reader at a door: named after the door's alias (made path-safe, as sim names must be). */
export function demoReaderName(alias: string): string {
  return alias.replace(/[^A-Za-z0-9_.-]/g, "_");
}

/** A demo gateway's hardware: lock boards as the manifest wires its devices, a reader at each door. */
export type DemoWiring = {
  boards: Map<number, { channels: number; doors: number[]; light: number[]; deep: number[] }>;
  doorAliases: string[];
};

export function demoWiring(gw: ManifestGateway): DemoWiring {
  const boards: DemoWiring["boards"] = new Map();
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
  return { boards, doorAliases: gw.devices.filter((d) => isDoorType(d.type)).map((d) => d.alias) };
}

/** The simulated site of that wiring: free lockers and docks at power-up (their latch open), doors locked. */
export function demoSimSpec({ boards, doorAliases }: DemoWiring): SimSiteSpec {
  return {
    moveMs: 300,
    readers: Object.fromEntries(doorAliases.map((alias) => [demoReaderName(alias), {}])),
    buses: boards.size
      ? {
          [DEMO_BUS]: {
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
  };
}

/** The gateway config's buses and readers for that wiring, each at the path `pathOf(simName)` gives. */
export function demoGatewayHardware(
  { boards, doorAliases }: DemoWiring,
  pathOf: (simName: string) => string,
): Pick<GatewayConfigInput, "buses" | "readers"> {
  return {
    buses: boards.size ? [{ name: DEMO_BUS, path: pathOf(DEMO_BUS), boards: [...boards.keys()] }] : [],
    readers: doorAliases.map((alias) => ({
      id: alias,
      path: pathOf(demoReaderName(alias)),
      device_alias: alias,
    })),
  };
}
