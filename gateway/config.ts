import { readFileSync } from "node:fs";
import { parse as parseYaml } from "yaml";
import { z } from "zod";
import { whyUnreadable } from "../shared/node/unreadable-file.ts";
import { parseCron } from "../shared/time/cron.ts";
import { GATEWAY_ID_PATTERN } from "../shared/wire/topics.ts";

/** A sweep's schedule (cron syntax, shared/time/cron.ts); a bad one is refused with what croner could not read. */
const CronExpression = z.string().superRefine((e, ctx) => {
  try {
    parseCron(e);
  } catch (err) {
    ctx.addIssue({ code: "custom", message: `not a cron expression (${(err as Error).message})` });
  }
});

/**
 * Gateway daemon configuration, validated at start (ARCHITECTURE: a bad config fails fast with a message
 * that names the key). Serial paths are device paths (/dev/ttyUSB0) or `tcp://host:port`; a test or the
 * demo that injects its own SerialLinkFactory may use paths of its own (the simulator's `sim://name`).
 */
export const GatewayConfig = z.strictObject({
  gateway_id: z.string().regex(GATEWAY_ID_PATTERN, "letters, digits, '.', '_' and '-' only"),
  /** The gateway's broker password; `secret_file` keeps it out of the config file. */
  secret: z.string().min(8).optional(),
  secret_file: z.string().optional(),
  broker: z.strictObject({
    url: z.string().regex(/^(mqtt|tcp):\/\//, "must be an mqtt:// URL"),
    prefix: z
      .string()
      .regex(/^[a-z0-9_-]+$/)
      .default("parking"),
  }),
  state_dir: z.string().min(1),
  buses: z
    .array(
      z.strictObject({
        name: z.string().min(1),
        path: z.string().min(1),
        baud_rate: z.number().int().positive().default(115_200),
        /** How long a board may take to ACK a request, and to send the reply once it acted. */
        ack_timeout_ms: z.number().int().positive().default(250),
        reply_timeout_ms: z.number().int().positive().default(3_000),
        /** Board addresses expected on this bus; probed at start and polled for reachability. */
        boards: z.array(z.number().int().min(1).max(247)).min(1),
      }),
    )
    .default([]),
  readers: z
    .array(
      z.strictObject({
        id: z.string().min(1),
        path: z.string().min(1),
        baud_rate: z.number().int().positive().default(9_600),
        /** Alias of the device this reader opens (a door, or a locker). */
        device_alias: z.string().min(1),
      }),
    )
    .default([]),
  gpio: z
    .strictObject({
      /** "onoff" drives real lines; "memory" keeps them in memory (dev runs without GPIO hardware). */
      driver: z.enum(["onoff", "memory"]).default("memory"),
      /** Logical line name (e.g. "door_strike:north", "tamper") → GPIO number. */
      lines: z.record(z.string(), z.number().int().min(0)).default({}),
    })
    .default({ driver: "memory", lines: {} }),
  control_socket: z
    .string()
    .optional()
    .describe(
      "Unix socket for parkctl; default $RUNTIME_DIRECTORY/control.sock under systemd, else <state_dir>/control.sock",
    ),
  metrics: z
    .strictObject({
      host: z.string().default("127.0.0.1"),
      port: z.number().int().min(0).max(65535).default(9464),
    })
    .optional(),
  heartbeat_interval_s: z.number().positive().default(5),
  /**
   * Outbox rows the cloud has not confirmed after this long are sent again (the cloud drops repeats); each
   * resend that brings no ack doubles the wait, up to 2 minutes, until an ack or a new connection.
   */
  outbox_resend_s: z.number().positive().default(10),
  /**
   * When to read every device's sensors again (cron syntax, shared/time/cron.ts; null: never). Events report changes as
   * they happen; the sweep catches one whose event was lost.
   */
  sensor_sweep: CronExpression.nullable().default("*/15 * * * *"),
  /**
   * When to delete expired grants from the key cache (cron syntax, shared/time/cron.ts; null: never). A tap checks
   * expiry itself; the sweep only keeps the cache small.
   */
  key_sweep: CronExpression.nullable().default("*/5 * * * *"),
  /** How long a tap waits for the cloud's answer about a card the key cache does not hold. */
  card_query_timeout_ms: z.number().int().min(100).max(10_000).default(1_500),
  /**
   * How much longer than the bus deadlines a REMOTE_WAKEUP device may take to answer: it wakes from light
   * sleep before it acknowledges (spec: power_save_strategy, "expect extra latency").
   */
  remote_wakeup_ms: z.number().int().min(0).max(60_000).default(3_000),
  /** How long a door stays released after an unlock, in seconds. */
  door_release_s: z.number().int().min(1).max(255).default(10),
  /** A door open this long is reported as held open (spec: status webhook, 5 minutes or more). */
  door_held_open_s: z.number().positive().default(300),
  /** How often open doors are checked against door_held_open_s. */
  door_watch_s: z.number().positive().default(5),
  log_level: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
});
export type GatewayConfig = z.infer<typeof GatewayConfig>;
export type GatewayConfigInput = z.input<typeof GatewayConfig>;

export class ConfigError extends Error {}

/** Validates a parsed config object; the error lists every problem by key path. */
export function parseGatewayConfig(data: unknown, source = "config"): GatewayConfig {
  const parsed = GatewayConfig.safeParse(data);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join(".") || "(root)"}: ${i.message}`);
    throw new ConfigError(`${source} is not a valid gateway configuration:\n${lines.join("\n")}`);
  }
  const cfg = parsed.data;
  if (!cfg.secret && !cfg.secret_file)
    throw new ConfigError(`${source}: secret or secret_file: one is required`);
  return cfg;
}

export function loadGatewayConfig(file: string): GatewayConfig {
  let data: unknown;
  try {
    const raw = readFileSync(file, "utf8");
    data = file.endsWith(".json") ? JSON.parse(raw) : parseYaml(raw);
  } catch (err) {
    throw new ConfigError(`${file}: ${err instanceof Error ? err.message : String(err)}`);
  }
  return parseGatewayConfig(data, file);
}

/** The broker password: `secret`, else the first line of `secret_file`; a problem names the key and the file. */
export function gatewaySecret(cfg: GatewayConfig, source = "config"): string {
  if (cfg.secret) return cfg.secret;
  const file = cfg.secret_file as string;
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    const why = whyUnreadable(err, "permission denied (the daemon's user must be able to read it)");
    throw new ConfigError(`${source}: secret_file: cannot read ${file}: ${why}`);
  }
  const secret = text.trim();
  if (!secret) throw new ConfigError(`${source}: secret_file: ${file} is empty`);
  return secret;
}

/**
 * The control socket: as configured; else in systemd's RuntimeDirectory (/run/parking-gateway, where
 * parkctl looks by default); else in the state directory for runs outside systemd.
 */
export function controlSocketPath(
  cfg: GatewayConfig,
  env: Record<string, string | undefined> = process.env,
): string {
  if (cfg.control_socket) return cfg.control_socket;
  const runtime = env.RUNTIME_DIRECTORY?.split(":")[0];
  return `${runtime || cfg.state_dir}/control.sock`;
}
