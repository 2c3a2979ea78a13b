// First: on an unsupported Node this stops with what to run instead, before the rest loads.
import "../shared/node/supported-node.ts";
import { Command } from "commander";
import { EXIT } from "../shared/cli/exit-codes.ts";
import { parseCommandLine, SERVICE_EXIT_CODES_HELP } from "../shared/node/command-line.ts";
import { createLogger } from "../shared/node/log.ts";
import { catchStopSignals } from "../shared/node/stop-signals.ts";
import { packageVersion } from "../shared/node/version.ts";
import { CloudConfigError, loadCloudConfig } from "./config.ts";
import { startCloud } from "./server.ts";
import { explainCloudStartError } from "./startup-errors.ts";

/**
 * Process entry of the cloud API: config → start → wait for SIGTERM/SIGINT → graceful stop. Configured
 * by the environment only (README, Configuration). Exit codes: 2 usage, 6 a bad variable, 1 any other
 * start-up failure (a port in use, an unreachable database), each message naming the variable.
 */
const program = new Command("parking-cloud")
  .description(
    "The bike-parking cloud API and, unless MQTT_URL is set, its embedded MQTT broker. Configured by environment variables.",
  )
  .version(packageVersion(), "-V, --version", "print the version")
  .helpOption("-h, --help", "show this help")
  .addHelpText(
    "after",
    `
Environment (README.md, Configuration, has the full table):
  PORT, HOST            HTTP listener (default 8080, 127.0.0.1)
  DATA_DIR              SQLite file and generated secrets (default ./data)
  DATABASE_URL          postgres://… to use PostgreSQL instead of SQLite
  MQTT_URL              an external broker; unset starts the embedded one on MQTT_PORT (default 1884)
  MQTT_PREFIX, MQTT_USERNAME, MQTT_PASSWORD, MQTT_CLIENT_ID, TOKEN_SECRET, BASE_URL, AUTH_URL
  MQTT_SHARE_GROUP      replicas' shared-subscription group on MQTT_URL (default parking-cloud)
  CONSOLE_IDLE_MINUTES  a console session unused this long is over (default 30)
  CONSOLE_MAP_TILES     the console overview's map tiles, https://host/{z}/{x}/{y}.png (default: no map)
  METRICS_PORT          serve Prometheus /metrics on this port (default: none)
  LOG_LEVEL, LOG_FORMAT  pino level (default info); json or pretty (default: pretty on a terminal)

Examples:
  $ npm run dev:cloud
  $ PORT=9090 MQTT_PORT=1885 DATA_DIR=/var/lib/parking-cloud npm run dev:cloud

${SERVICE_EXIT_CODES_HELP}`,
  );

async function main() {
  const ended = parseCommandLine(program);
  if (ended !== null) process.exit(ended);
  const cfg = loadCloudConfig();
  const log = createLogger({ level: cfg.LOG_LEVEL, format: cfg.LOG_FORMAT });
  // Caught before anything starts: a SIGTERM right after "cloud ready" is a stop, never the signal's death.
  const signals = catchStopSignals();
  let cloud: Awaited<ReturnType<typeof startCloud>>;
  try {
    cloud = await startCloud(cfg, { log });
  } catch (err) {
    throw new Error(explainCloudStartError(err, cfg));
  }
  const stopping = signals.stopWith(async (signal) => {
    cloud.app.log.info({ signal }, "stopping");
    await cloud.stop();
    process.exit(0);
  });
  if (!stopping) cloud.app.log.info({ base_url: cloud.baseUrl, mqtt: cloud.mqttUrl }, "cloud ready");
}

main().catch((err: unknown) => {
  console.error(`parking-cloud: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(err instanceof CloudConfigError ? EXIT.checkFailed : EXIT.unexpected);
});
