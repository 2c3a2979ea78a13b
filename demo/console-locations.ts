/**
 * The demo's locations as the hardware console addresses them (code, device alias), each device with the
 * simulated site and gateway that run it, and the errors a person can fix.
 */
import type { SiteManifest } from "../cloud/manifest/manifest-schema.ts";
import type { RunningGateway } from "../gateway/gateway.ts";
import type { SimSite } from "../hardware-sim/site.ts";

/** What the console needs of the running demo (demo/demo.ts RunningDemo has it). */
export type ConsoleDemo = {
  manifest: SiteManifest;
  gateways: { gateways: readonly RunningGateway[]; sims: readonly SimSite[] };
};

type ManifestDevice =
  SiteManifest["operators"][number]["locations"][number]["gateways"][number]["devices"][number];

/** A device of a location, with the simulated site and gateway that run it (null: not run by the demo). */
export type ConsoleDevice = {
  alias: string;
  type: string;
  bus: { board: number; channel: number } | null;
  gatewayId: string;
  run: { gateway: RunningGateway; sim: SimSite } | null;
};

/** A device the demo runs. */
export type RunDevice = ConsoleDevice & { run: NonNullable<ConsoleDevice["run"]> };

export type ConsoleLocation = { code: string; label: string; gatewayIds: string[]; devices: ConsoleDevice[] };

/** A line the person can fix: printed as it is, never a stack trace. */
export class ConsoleError extends Error {}

export function firstWired(loc: ConsoleLocation): ConsoleDevice {
  const d = loc.devices.find((x) => x.bus !== null);
  if (!d) throw new ConsoleError(`${loc.code} has no device on a lock bus, so no tamper switch`);
  return d;
}

export function listOf(kind: string, names: string[]): string {
  return names.length ? `devices with ${kind}: ${names.join(", ")}` : `none of its devices has ${kind}`;
}

/** The demo runs a simulated site per gateway it runs, in the same order (demo/demo-gateways.ts). */
export function runOf(demo: ConsoleDemo, gatewayId: string): ConsoleDevice["run"] {
  const i = demo.gateways.gateways.findIndex((g) => g.config.gateway_id === gatewayId);
  const gateway = demo.gateways.gateways[i];
  const sim = demo.gateways.sims[i];
  return gateway && sim ? { gateway, sim } : null;
}

export function consoleLocations(demo: ConsoleDemo): ConsoleLocation[] {
  const seen = new Set<string>();
  const out: ConsoleLocation[] = [];
  for (const op of demo.manifest.operators) {
    for (const loc of op.locations) {
      // Codes are unique per operator; the demo has one, and the first of a repeated code wins.
      if (seen.has(loc.code.toLowerCase())) continue;
      seen.add(loc.code.toLowerCase());
      out.push({
        code: loc.code,
        label: loc.label,
        gatewayIds: loc.gateways.map((gw) => gw.id),
        devices: loc.gateways.flatMap((gw) => {
          const run = runOf(demo, gw.id);
          return gw.devices.map((d: ManifestDevice) => ({
            alias: d.alias,
            type: d.type,
            bus: d.bus ?? null,
            gatewayId: gw.id,
            run,
          }));
        }),
      });
    }
  }
  return out;
}
