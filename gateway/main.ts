import { parseArgs } from "node:util";
import { systemClock } from "../shared/clock.ts";
import { createSdNotify, watchdogIntervalMs } from "./adapters/sd-notify.ts";
import { gatewaySecret, loadGatewayConfig } from "./config.ts";
import { startGateway } from "./gateway.ts";
import { createWatchdog } from "./health/watchdog.ts";

/**
 * Process entry of the gateway daemon: `--config <file>`. Tells systemd when it is ready, pings the
 * watchdog only while healthy (so a wedged daemon is restarted), and stops gracefully on SIGTERM/SIGINT.
 */
async function main() {
  const { values } = parseArgs({ options: { config: { type: "string", short: "c" } } });
  const file = values.config ?? process.env.PARKING_GATEWAY_CONFIG ?? "/etc/parking-gateway/config.yaml";
  const config = loadGatewayConfig(file);
  const gateway = await startGateway({ config, secret: gatewaySecret(config) });
  const sd = createSdNotify({ log: gateway.log });
  const interval = watchdogIntervalMs();
  const watchdog = interval
    ? createWatchdog({
        notify: (m) => sd.notify(m),
        intervalMs: interval,
        isHealthy: () => gateway.isHealthy(),
        clock: systemClock,
        log: gateway.log,
      })
    : null;
  watchdog?.start();
  await sd.ready(`gateway ${config.gateway_id} running`);

  const stop = async (signal: string) => {
    gateway.log.info({ signal }, "stopping");
    await sd.stopping();
    watchdog?.stop();
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
