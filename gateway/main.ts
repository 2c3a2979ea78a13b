import { parseArgs } from "node:util";
import { gatewaySecret, loadGatewayConfig } from "./config.ts";
import { startGateway } from "./gateway.ts";

/** Process entry of the gateway daemon: `--config <file>`; SIGTERM/SIGINT stop it gracefully. */
async function main() {
  const { values } = parseArgs({ options: { config: { type: "string", short: "c" } } });
  const file = values.config ?? process.env.PARKING_GATEWAY_CONFIG ?? "/etc/parking-gateway/config.yaml";
  const config = loadGatewayConfig(file);
  const gateway = await startGateway({ config, secret: gatewaySecret(config) });
  const stop = async (signal: string) => {
    gateway.log.info({ signal }, "stopping");
    await gateway.stop();
    process.exit(0);
  };
  process.once("SIGTERM", () => void stop("SIGTERM"));
  process.once("SIGINT", () => void stop("SIGINT"));
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
