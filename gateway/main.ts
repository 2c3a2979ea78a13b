// First: on an unsupported Node this stops with what to run instead, before the rest loads.
import "../shared/node/supported-node.ts";
import { existsSync } from "node:fs";
// A namespace, not a named import: Node 20 has no flushCompileCache, and a missing named export fails the
// whole bundle as it links, before supported-node.ts can say what to run.
import * as nodeModule from "node:module";
import { Command } from "commander";
import { EXIT } from "../shared/cli/exit-codes.ts";
import { parseCommandLine, SERVICE_EXIT_CODES_HELP } from "../shared/node/command-line.ts";
import { createLogger, LogFormatError, logFormat } from "../shared/node/log.ts";
import { catchStopSignals } from "../shared/node/stop-signals.ts";
import { systemClock } from "../shared/node/system-clock.ts";
import { packageVersion } from "../shared/node/version.ts";
import { createSdNotify, watchdogIntervalMs } from "./adapters/systemd/sd-notify.ts";
import { ConfigError, type GatewayConfig, gatewaySecret, loadGatewayConfig } from "./config.ts";
import { isStoreFull } from "./features/store-full.ts";
import { startGateway } from "./gateway.ts";
import { createWatchdog } from "./health/watchdog.ts";

const DEFAULT_CONFIG = "/etc/parking-gateway/config.yaml";

/**
 * Process entry of the gateway daemon: `--config <file>`. Tells systemd when it is ready, pings the
 * watchdog only while healthy (so a wedged daemon is restarted), and stops gracefully on SIGTERM/SIGINT.
 * Exit codes: 2 usage, 6 invalid configuration (naming the key, file or variable), 1 anything else.
 */
const program = new Command("parking-gateway")
  .description(
    "The bike-parking gateway daemon: drives a site's lock boards, readers and doors for the cloud.",
  )
  .version(packageVersion(), "-V, --version", "print the version")
  .option(
    "-c, --config <file>",
    `gateway config file (YAML or JSON; default: $PARKING_GATEWAY_CONFIG, else ${DEFAULT_CONFIG})`,
  )
  .helpOption("-h, --help", "show this help")
  .addHelpText(
    "after",
    `
Environment:
  PARKING_GATEWAY_CONFIG  config file when --config is not given
  LOG_FORMAT              json or pretty (default: pretty on a terminal, json otherwise)

Examples:
  $ npm run dev:gateway -- --config demo/standalone/gw-cs-lockers.gateway.yaml
  $ parkctl config validate ${DEFAULT_CONFIG}     # check a config without starting

${SERVICE_EXIT_CODES_HELP}
See gateway/config.example.yaml for every key.`,
  );

async function main(): Promise<void> {
  const ended = parseCommandLine(program);
  if (ended !== null) process.exit(ended);
  const opts = program.opts<{ config?: string }>();
  const file = opts.config ?? process.env.PARKING_GATEWAY_CONFIG ?? DEFAULT_CONFIG;
  if (!existsSync(file)) {
    const from = opts.config
      ? "--config"
      : process.env.PARKING_GATEWAY_CONFIG
        ? "PARKING_GATEWAY_CONFIG"
        : "the default path";
    throw new ConfigError(
      `no gateway config at ${file} (from ${from}); pass --config <file> or set PARKING_GATEWAY_CONFIG`,
    );
  }
  const config = loadGatewayConfig(file);
  const secret = gatewaySecret(config, file);
  const log = createLogger({ level: config.log_level, format: logFormat() }).child({
    gateway_id: config.gateway_id,
  });
  // Caught before anything starts: `systemctl stop` right after READY=1 is a stop, never the signal's death.
  const signals = catchStopSignals();
  let gateway: Awaited<ReturnType<typeof startGateway>>;
  try {
    gateway = await startGateway({ config, secret, log });
  } catch (err) {
    throw new Error(explainStartError(err, config, file));
  }
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
  // A full state disk (SQLITE_FULL) in a handler the features do not guard: SQLite rolled the write back and
  // the store is intact, and what went unrecorded was never acknowledged. Restarting would not make room (and
  // would refuse the work still possible), so the daemon stays up; the heartbeat tells the cloud (storage
  // alarm) and all resumes once there is room. Anything else still ends the process.
  process.on("uncaughtException", (err) => {
    if (!isStoreFull(err)) {
      console.error(err);
      process.exit(EXIT.unexpected);
    }
    gateway.log.error({ err }, "not recorded: the gateway's state store is full (SQLITE_FULL)");
  });
  const stopping = signals.stopWith(async (signal) => {
    gateway.log.info({ signal }, "stopping");
    await sd.stopping();
    watchdog?.stop();
    await gateway.stop();
    process.exit(0);
  });
  if (stopping) return;
  watchdog?.start();
  await sd.ready(`gateway ${config.gateway_id} running`);
  // The compile cache (NODE_COMPILE_CACHE, set by the unit) is written now rather than at exit, which a
  // daemon killed by its watchdog never reaches.
  nodeModule.flushCompileCache();
}

/** Names the key of the config file behind a start-up failure, where the error tells which one it was. */
function explainStartError(err: unknown, cfg: GatewayConfig, file: string): string {
  const e = err as NodeJS.ErrnoException & { port?: number; address?: string; path?: string };
  const msg = err instanceof Error ? err.message : String(err);
  if (cfg.metrics && e.port === cfg.metrics.port && e.code === "EADDRINUSE")
    return `${file}: metrics.port: ${cfg.metrics.host}:${cfg.metrics.port} is already in use; pick another port or remove metrics`;
  if (/control socket/.test(msg))
    return `${msg} (${file}: control_socket, else state_dir decides where it is)`;
  if ((e.code === "EACCES" || e.code === "EROFS") && e.path?.startsWith(cfg.state_dir))
    return `${file}: state_dir: cannot write ${cfg.state_dir}: ${e.code === "EACCES" ? "permission denied" : "read-only file system"}`;
  return msg;
}

main().catch((err: unknown) => {
  console.error(`parking-gateway: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(
    err instanceof ConfigError || err instanceof LogFormatError ? EXIT.checkFailed : EXIT.unexpected,
  );
});
