/**
 * `npm start`: the whole system on embedded defaults (demo/demo.ts) — prints where to reach it, how to
 * authenticate and how to look at each gateway with parkctl. Exit codes: 2 usage, 6 a bad variable, 1 any
 * other start-up failure (a port in use names PORT or MQTT_PORT).
 */
// First: on an unsupported Node this stops with what to run instead, before the rest loads.
import "../shared/node/supported-node.ts";
import { Command } from "commander";
import { CloudConfigError } from "../cloud/config.ts";
import { loadManifest } from "../cloud/manifest/load-manifest.ts";
import { explainCloudStartError } from "../cloud/startup-errors.ts";
import { EXIT } from "../shared/cli/exit-codes.ts";
import { parseCommandLine, SERVICE_EXIT_CODES_HELP } from "../shared/node/command-line.ts";
import { createLogger, LogFormatError } from "../shared/node/log.ts";
import { catchStopSignals } from "../shared/node/stop-signals.ts";
import { packageVersion } from "../shared/node/version.ts";
import { attachDemoConsole, DEMO_PROMPT, inBackgroundOfTerminal } from "./console-input.ts";
import {
  DEMO_DEFAULTS,
  DEMO_MANIFEST,
  DemoConfigError,
  demoBanner,
  demoSettings,
  startDemo,
} from "./demo.ts";
import { createDemoConsole } from "./demo-console.ts";

const program = new Command("demo")
  .description(
    "The whole bike-parking system in one process: the cloud API, the embedded MQTT broker, SQLite, the demo " +
      "site manifest and a gateway daemon per demo site on simulated hardware.",
  )
  .version(packageVersion(), "-V, --version", "print the version")
  .helpOption("-h, --help", "show this help")
  .addHelpText(
    "after",
    `
Environment (besides the cloud's own, README.md, Configuration):
  DATA_DIR              where the demo keeps its state (default ${DEMO_DEFAULTS.DATA_DIR})
  DEMO_CLIENT_ID        the demo's API client (default ${DEMO_DEFAULTS.DEMO_CLIENT_ID})
  DEMO_CLIENT_SECRET    its secret (default ${DEMO_DEFAULTS.DEMO_CLIENT_SECRET})
  DEMO_GATEWAY_SECRET   every demo gateway's broker password (default ${DEMO_DEFAULTS.DEMO_GATEWAY_SECRET})
  DEMO_SKIP_GATEWAYS    gateway ids (comma-separated) the demo leaves to a gateway daemon of your own
  DEMO_VERIFICATION_URL the demo operator's verification server (<url>/sign-up, <url>/sign-in) instead of
                        the one the demo runs on 127.0.0.1
  DEMO_VERIFICATION_SECRET
                        the whsec_ secret signing those callbacks (generated into DATA_DIR when unset)
  DEMO_WEBHOOK_URL      the demo operator's webhook receiver (every type, direct delivery, loopback allowed)
  DEMO_WEBHOOK_SECRET   its whsec_ signing secret (generated and printed when unset)

Hardware commands on standard input (type "help" once it runs), e.g.:
  HB-H tap door-north 04a1b2c3d4     HB-H open door-north     HB-H tamper     status

Examples:
  $ npm start
  $ printf 'status\n' | npm start                  # commands may come from a pipe too
  $ PORT=9090 MQTT_PORT=1885 npm start
  $ DEMO_SKIP_GATEWAYS=gw-cs-lockers npm start     # prints the npm run sim and dev:gateway commands for it

${SERVICE_EXIT_CODES_HELP}`,
  );

async function main() {
  const ended = parseCommandLine(program);
  if (ended !== null) process.exit(ended);
  // Read (and check) the settings before anything starts, so a bad variable is named on its own.
  const { cfg } = demoSettings(process.env, loadManifest(DEMO_MANIFEST));
  const log = createLogger({ level: cfg.LOG_LEVEL, format: cfg.LOG_FORMAT });
  // Caught before anything starts: a SIGTERM right after the banner is a stop, never the signal's death.
  const signals = catchStopSignals();
  let demo: Awaited<ReturnType<typeof startDemo>>;
  try {
    demo = await startDemo({ log });
  } catch (err) {
    throw new Error(explainCloudStartError(err, cfg));
  }
  const stopping = signals.stopWith(async () => {
    await demo.stop();
    process.exit(0);
  });
  if (stopping) return;
  process.stdout.write(demoBanner(demo));
  // Hardware commands on stdin (a terminal or a pipe); not from the background of a terminal (`npm start &`),
  // where reading it would stop the demo. The end of stdin ends the console, never the demo.
  if (!(process.stdin.isTTY && inBackgroundOfTerminal())) {
    const hardware = createDemoConsole(demo);
    process.stdout.write(`Type "help" for hardware commands (e.g. ${hardware.example}).\n`);
    attachDemoConsole(hardware, process.stdin, process.stdout, {
      prompt: process.stdin.isTTY ? DEMO_PROMPT : undefined,
    });
  }
}

main().catch((err: unknown) => {
  console.error(`demo: ${err instanceof Error ? err.message : String(err)}`);
  const invalid =
    err instanceof CloudConfigError || err instanceof DemoConfigError || err instanceof LogFormatError;
  process.exit(invalid ? EXIT.checkFailed : EXIT.unexpected);
});
