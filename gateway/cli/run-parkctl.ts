/**
 * parkctl, the field technician's CLI for the gateway daemon (gateway/cli/README.md). runParkctl runs one
 * invocation against the given io and returns its exit code, so tests run it in-process.
 */
import { Command, CommanderError, Option } from "commander";
import { CliExit, EXIT } from "../../shared/cli/exit-codes.ts";
import { commanderExitCode } from "../../shared/node/command-line.ts";
import { packageVersion } from "../../shared/node/version.ts";
import { CONTROL_ERROR } from "../control/control-api.ts";
import { ControlCallError, ControlUnreachableError } from "../control/control-client.ts";
import { registerActuate } from "./commands/actuate.ts";
import { registerCompletion } from "./commands/completion.ts";
import { registerConfig } from "./commands/config.ts";
import { registerDevices } from "./commands/devices.ts";
import { registerDoctor } from "./commands/doctor.ts";
import { registerKeys } from "./commands/keys.ts";
import { registerOutbox } from "./commands/outbox.ts";
import { registerSerial } from "./commands/serial.ts";
import { registerStatus } from "./commands/status.ts";
import { CliContext, DEFAULT_SOCKET, isNotFoundCode, parseTimeout, type Wrap } from "./context.ts";
import { SocketNotFoundError } from "./discover.ts";
import { EXIT_CODES_HELP } from "./exit-codes-help.ts";
import type { ParkctlIo } from "./io.ts";

export type { ParkctlIo } from "./io.ts";

export async function runParkctl(argv: readonly string[], io: ParkctlIo): Promise<number> {
  let code: number = EXIT.ok;
  let ctx: CliContext | null = null;
  const wrap: Wrap =
    (handler) =>
    async (...all) => {
      const cmd = all.at(-1) as Command;
      const opts = (all.at(-2) ?? {}) as Record<string, unknown>;
      const args = all.slice(0, -2).map((a) => String(a));
      ctx = await CliContext.open(io, cmd);
      const result = await handler(ctx, args, opts);
      code = typeof result === "number" ? result : EXIT.ok;
    };
  const program = buildProgram(io, wrap);
  try {
    await program.parseAsync([...argv], { from: "user" });
    return code;
  } catch (err) {
    return report(io, err, ctx);
  }
}

function buildProgram(io: ParkctlIo, wrap: Wrap): Command {
  const program = new Command("parkctl")
    .description("Inspect and operate the bike-parking gateway daemon on this site controller.")
    .addOption(
      new Option(
        "-s, --socket <path>",
        `daemon control socket (default: from --config or --gateway, else $PARKCTL_SOCKET, else ${DEFAULT_SOCKET})`,
      ),
    )
    .option("-c, --config <file>", "gateway config file to take the control socket path from")
    .addOption(
      new Option(
        "-g, --gateway <id>",
        "a gateway of the demo (npm start): its socket under $DATA_DIR/gateways/<id>/, else data/demo/gateways/<id>/",
      ).conflicts(["socket", "config"]),
    )
    .option("--json", "print machine-readable JSON (with schema_version: 1) instead of text")
    .option(
      "--no-color",
      "no ANSI colour (also off when stdout is not a terminal, NO_COLOR is set or TERM=dumb)",
    )
    .option("--timeout <ms>", "how long to wait for the daemon's answer", parseTimeout)
    .version(packageVersion(), "-V, --version", "print parkctl's version")
    .showHelpAfterError("(run with --help for usage)")
    .addHelpText(
      "after",
      `
Examples:
  $ parkctl status
  $ parkctl devices --json
  $ sudo parkctl unlock locker-12 --reason "bike stuck, ticket 4711"
  $ parkctl doctor
  $ parkctl --gateway gw-cs-lockers devices      # a gateway of the demo (npm start), from the repository

Where the socket is: --socket, else --config's control_socket, else --gateway's, else $PARKCTL_SOCKET,
else ${DEFAULT_SOCKET}.

${EXIT_CODES_HELP}

Data goes to stdout, messages to stderr. Every command has --help with examples.`,
    );
  program.configureOutput({
    writeOut: (s) => io.stdout.write(s),
    writeErr: (s) => io.stderr.write(s),
  });
  // Every command and subcommand reports instead of exiting, so runParkctl can return the code.
  program.exitOverride();
  registerStatus(program, wrap);
  registerDevices(program, wrap);
  registerActuate(program, wrap);
  registerOutbox(program, wrap);
  registerKeys(program, wrap);
  registerSerial(program, wrap);
  registerConfig(program, wrap);
  registerDoctor(program, wrap);
  registerCompletion(program, wrap);
  applyToAll(program, (c) => {
    c.exitOverride();
    c.configureOutput({ writeOut: (s) => io.stdout.write(s), writeErr: (s) => io.stderr.write(s) });
  });
  return program;
}

function applyToAll(cmd: Command, fn: (c: Command) => void): void {
  for (const c of cmd.commands) {
    fn(c);
    applyToAll(c, fn);
  }
}

function report(io: ParkctlIo, err: unknown, ctx: CliContext | null): number {
  const say = (text: string) => io.stderr.write(`parkctl: ${text}\n`);
  if (err instanceof CommanderError) return commanderExitCode(err);
  if (err instanceof CliExit) {
    say(err.message);
    return err.code;
  }
  if (err instanceof ControlUnreachableError) {
    const hint =
      err instanceof SocketNotFoundError
        ? err.hint
        : err.reason === "permission_denied"
          ? "use sudo, or add yourself to the daemon's group: sudo usermod -aG parking-gateway $USER"
          : (ctx?.unreachableHint() ?? "check it with: systemctl status parking-gateway");
    say(`${err.message}\nhint: ${hint}`);
    return EXIT.unreachable;
  }
  if (err instanceof ControlCallError) {
    say(`the daemon refused: ${err.message} (${err.code})`);
    if (isNotFoundCode(err.code)) return EXIT.notFound;
    // The daemon rejected what was typed (e.g. a reason longer than it accepts).
    return err.code === CONTROL_ERROR.badRequest ? EXIT.usage : EXIT.unexpected;
  }
  say(`unexpected error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  return EXIT.unexpected;
}
