/**
 * What every parkctl command shares: the global options, resolved once per run, the output in the mode
 * they ask for, and calls to the daemon over its control socket.
 */
import { type Command, InvalidArgumentError } from "commander";
import { CliExit, EXIT } from "../../shared/cli/exit-codes.ts";
import { CONTROL_ERROR } from "../control/control-api.ts";
import { callControl } from "../control/control-client.ts";
import { DEFAULT_SOCKET, findDemoGateway, type SocketChoice, unreachableHint } from "./discover.ts";
import type { ParkctlIo } from "./io.ts";
import { colorEnabled, Output } from "./output.ts";

export { DEFAULT_SOCKET };

export type GlobalOptions = {
  socket?: string;
  config?: string;
  gateway?: string;
  json?: boolean;
  color: boolean;
  timeout?: number;
};

export class CliContext {
  readonly out: Output;
  private readonly opts: GlobalOptions;
  private chosen: SocketChoice | null = null;

  /** What reads --config's control socket, loaded by open() only when --config is given. */
  private socketOfConfig: ((file: string) => string) | null = null;

  constructor(
    readonly io: ParkctlIo,
    cmd: Command,
  ) {
    this.opts = cmd.optsWithGlobals<GlobalOptions>();
    this.out = new Output(io, this.opts.json === true, colorEnabled(io, this.opts.color !== false));
  }

  /**
   * A context for one run. The config parser (zod, yaml: most of parkctl's start-up time) is imported only
   * when --config names a file to take the socket from.
   */
  static async open(io: ParkctlIo, cmd: Command): Promise<CliContext> {
    const ctx = new CliContext(io, cmd);
    if (ctx.opts.config) ctx.socketOfConfig = (await import("./config-file.ts")).controlSocketOf;
    return ctx;
  }

  /**
   * --socket, else the control_socket of --config, else the demo's gateway named by --gateway, else
   * $PARKCTL_SOCKET, else the packaged default. Options beat the environment.
   */
  socketChoice(): SocketChoice {
    this.chosen ??= this.chooseSocket();
    return this.chosen;
  }

  socketPath(): string {
    return this.socketChoice().path;
  }

  private chooseSocket(): SocketChoice {
    if (this.opts.socket) return { path: this.opts.socket, source: "socket" };
    if (this.opts.config) {
      if (!this.socketOfConfig) throw new Error("a context for --config comes from CliContext.open()");
      return { path: this.socketOfConfig(this.opts.config), source: "config" };
    }
    if (this.opts.gateway) return findDemoGateway(this.opts.gateway, this.io.env, this.cwd());
    if (this.io.env.PARKCTL_SOCKET) return { path: this.io.env.PARKCTL_SOCKET, source: "env" };
    return { path: DEFAULT_SOCKET, source: "default" };
  }

  /** What to tell a technician whose daemon did not answer, given how its socket was found. */
  unreachableHint(): string {
    const choice = this.chosen ?? { path: DEFAULT_SOCKET, source: "default" as const };
    return unreachableHint(choice, this.io.env, this.cwd());
  }

  private cwd(): string {
    return this.io.cwd?.() ?? process.cwd();
  }

  /**
   * Who a local action is recorded as: --who, else the user behind sudo, else the login user from the
   * environment, else the operating system's account of this process (a shell without $USER: cron,
   * `env -i`, some containers).
   */
  who(explicit: string | undefined): string {
    const env = this.io.env;
    return explicit?.trim() || env.SUDO_USER || env.USER || env.LOGNAME || this.io.username?.() || "unknown";
  }

  async call<T>(method: string, params: Record<string, unknown> = {}, defaultTimeoutMs = 10_000): Promise<T> {
    return (await callControl(this.socketPath(), method, params, {
      timeoutMs: this.opts.timeout ?? defaultTimeoutMs,
    })) as T;
  }

  /** A message for people on stderr (never stdout, which carries data). */
  note(text: string): void {
    this.io.stderr.write(`${text}\n`);
  }

  notFound(alias: string): CliExit {
    return new CliExit(EXIT.notFound, `no device with alias "${alias}" (list them with: parkctl devices)`);
  }
}

export function isNotFoundCode(code: string): boolean {
  return code === CONTROL_ERROR.deviceNotFound || code === "not_found";
}

export function parseTimeout(value: string): number {
  const ms = Number(value);
  if (!Number.isInteger(ms) || ms <= 0)
    throw new InvalidArgumentError("takes a whole number of milliseconds > 0");
  return ms;
}

/**
 * What an action handler gets: the run's context, its positional arguments and its own options. It returns
 * (or resolves to) its exit code; anything but a number means 0.
 */
export type Handler = (ctx: CliContext, args: string[], opts: Record<string, unknown>) => unknown;

/** Turns a handler into a commander action; the handler's exit code is reported through `done`. */
export type Wrap = (handler: Handler) => (...commanderArgs: unknown[]) => Promise<void>;

export function withExamples(cmd: Command, examples: string[]): Command {
  return cmd.addHelpText("after", `\nExamples:\n${examples.map((e) => `  $ ${e}`).join("\n")}\n`);
}
