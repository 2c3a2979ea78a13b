import { readFileSync } from "node:fs";
import { parse as parseYaml } from "yaml";
import * as z from "zod/mini";
import { whyUnreadable } from "../shared/node/unreadable-file.ts";
import { parseCron } from "../shared/time/cron.ts";
import { GATEWAY_ID_PATTERN } from "../shared/wire/topics.ts";
import "../shared/wire/zod-english.ts";

/** A sweep's schedule (cron syntax, shared/time/cron.ts); a bad one is refused with what croner could not read. */
const CronExpression = z.string().check(
  z.superRefine((e, ctx) => {
    try {
      parseCron(e);
    } catch (err) {
      ctx.addIssue({ code: "custom", message: `not a cron expression (${(err as Error).message})` });
    }
  }),
);

const PositiveInt = (fallback: number) => z._default(z.int().check(z.positive()), fallback);
const IntBetween = (min: number, max: number, fallback: number) =>
  z._default(z.int().check(z.minimum(min), z.maximum(max)), fallback);
const Positive = (fallback: number) => z._default(z.number().check(z.positive()), fallback);
const NonEmpty = () => z.string().check(z.minLength(1));

/**
 * Gateway daemon configuration, validated at start (ARCHITECTURE: a bad config fails fast with a message
 * that names the key). Serial paths are device paths (/dev/ttyUSB0) or `tcp://host:port`; a test or the
 * demo that injects its own SerialLinkFactory may use paths of its own (the simulator's `sim://name`).
 * Written against `zod/mini`, as the wire's schemas are (shared/wire/zod-english.ts).
 */
export const GatewayConfig = z.strictObject({
  gateway_id: z.string().check(z.regex(GATEWAY_ID_PATTERN, "letters, digits, '.', '_' and '-' only")),
  /** The gateway's broker password; `secret_file` keeps it out of the config file. */
  secret: z.optional(z.string().check(z.minLength(8))),
  secret_file: z.optional(z.string()),
  broker: z.strictObject({
    url: z.string().check(z.regex(/^(mqtt|tcp):\/\//, "must be an mqtt:// URL")),
    prefix: z._default(z.string().check(z.regex(/^[a-z0-9_-]+$/)), "parking"),
  }),
  state_dir: NonEmpty(),
  buses: z._default(
    z.array(
      z.strictObject({
        name: NonEmpty(),
        path: NonEmpty(),
        baud_rate: PositiveInt(115_200),
        /** How long a board may take to ACK a request, and to send the reply once it acted. */
        ack_timeout_ms: PositiveInt(250),
        reply_timeout_ms: PositiveInt(3_000),
        /** Board addresses expected on this bus; probed at start and polled for reachability. */
        boards: z.array(z.int().check(z.minimum(1), z.maximum(247))).check(z.minLength(1)),
      }),
    ),
    [],
  ),
  readers: z._default(
    z.array(
      z.strictObject({
        id: NonEmpty(),
        path: NonEmpty(),
        baud_rate: PositiveInt(9_600),
        /** Alias of the device this reader opens (a door, or a locker). */
        device_alias: NonEmpty(),
      }),
    ),
    [],
  ),
  gpio: z._default(
    z.strictObject({
      /** "onoff" drives real lines; "memory" keeps them in memory (dev runs without GPIO hardware). */
      driver: z._default(z.enum(["onoff", "memory"]), "memory"),
      /** Logical line name (e.g. "door_strike:north", "tamper") → GPIO number. */
      lines: z._default(z.record(z.string(), z.int().check(z.minimum(0))), {}),
    }),
    { driver: "memory", lines: {} },
  ),
  control_socket: z
    .optional(z.string())
    .check(
      z.describe(
        "Unix socket for parkctl; default $RUNTIME_DIRECTORY/control.sock under systemd, else <state_dir>/control.sock",
      ),
    ),
  metrics: z.optional(
    z.strictObject({
      host: z._default(z.string(), "127.0.0.1"),
      port: IntBetween(0, 65535, 9464),
    }),
  ),
  heartbeat_interval_s: Positive(5),
  /**
   * Outbox rows the cloud has not confirmed after this long are sent again (the cloud drops repeats); each
   * resend that brings no ack doubles the wait, up to 2 minutes, until an ack or a new connection.
   */
  outbox_resend_s: Positive(10),
  /**
   * When to read every device's sensors again (cron syntax, shared/time/cron.ts; null: never). Events report changes as
   * they happen; the sweep catches one whose event was lost.
   */
  sensor_sweep: z._default(z.nullable(CronExpression), "*/15 * * * *"),
  /**
   * When to delete expired grants from the key cache (cron syntax, shared/time/cron.ts; null: never). A tap checks
   * expiry itself; the sweep only keeps the cache small.
   */
  key_sweep: z._default(z.nullable(CronExpression), "*/5 * * * *"),
  /** How long a tap waits for the cloud's answer about a card the key cache does not hold. */
  card_query_timeout_ms: IntBetween(100, 10_000, 1_500),
  /**
   * How much longer than the bus deadlines a REMOTE_WAKEUP device may take to answer: it wakes from light
   * sleep before it acknowledges (spec: power_save_strategy, "expect extra latency").
   */
  remote_wakeup_ms: IntBetween(0, 60_000, 3_000),
  /** How long a door stays released after an unlock, in seconds. */
  door_release_s: IntBetween(1, 255, 10),
  /** A door open this long is reported as held open (spec: status webhook, 5 minutes or more). */
  door_held_open_s: Positive(300),
  /** How often open doors are checked against door_held_open_s. */
  door_watch_s: Positive(5),
  log_level: z._default(z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]), "info"),
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
