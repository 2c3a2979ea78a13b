import { type ConsoleDemo, type ConsoleLocation, runOf } from "./console-locations.ts";

/**
 * The console's `status`: every device of the chosen locations as its gateway sees it (latch, door, item,
 * reachable) and each gateway's broker link; a gateway the demo does not run says so.
 */
export async function consoleStatus(demo: ConsoleDemo, chosen: readonly ConsoleLocation[]): Promise<string> {
  const out: string[] = [];
  for (const loc of chosen) {
    out.push(`${loc.code}  ${loc.label}`);
    for (const gatewayId of loc.gatewayIds) {
      const run = runOf(demo, gatewayId);
      if (!run) {
        out.push(`  gateway ${gatewayId}: not run by the demo (DEMO_SKIP_GATEWAYS)`);
        continue;
      }
      const [st, devices] = await Promise.all([run.gateway.control.status(), run.gateway.control.devices()]);
      out.push(`  gateway ${gatewayId}: broker ${st.broker.connected ? "connected" : "NOT connected"}`);
      if (devices.length === 0) out.push("    (no device map from the cloud yet)");
      const width = Math.max(0, ...devices.map((d) => d.alias.length));
      const typeWidth = Math.max(0, ...devices.map((d) => d.type.length));
      for (const d of devices) {
        const cells =
          d.type === "GUARD"
            ? ["the gateway itself"]
            : [
                `latch ${d.latch ?? "?"}`.padEnd(14),
                `door ${d.door_open === null ? "?" : d.door_open ? "open" : "shut"}`.padEnd(9),
                `item ${d.item_present === null ? "?" : d.item_present ? "yes" : "no"}`,
                d.reachable ? "" : "  UNREACHABLE",
              ];
        out.push(`    ${d.alias.padEnd(width)}  ${d.type.padEnd(typeWidth)}  ${cells.join("  ")}`.trimEnd());
      }
    }
  }
  return out.join("\n");
}
