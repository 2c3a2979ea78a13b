import { z } from "zod";
import { tileTemplateProblem } from "../shared/domain/map-tiles.ts";

/**
 * Cloud configuration from the environment, validated at start: a bad value fails fast with a
 * message naming the variable (ARCHITECTURE: Operating it).
 */
export const CloudConfig = z.object({
  HOST: z.string().default("127.0.0.1"),
  PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  DATA_DIR: z.string().default("./data"),
  /** postgres://… to use PostgreSQL; SQLite in DATA_DIR otherwise. */
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, "must be a postgres:// URL")
    .optional(),
  /** PostgreSQL connections for HTTP requests and background work, and for what gateways send. */
  DATABASE_POOL_MAX: z.coerce.number().int().min(1).max(1000).default(10),
  DATABASE_GATEWAY_POOL_MAX: z.coerce.number().int().min(1).max(1000).default(10),
  /** mqtt://host:port of an external broker; the embedded broker is started when unset. */
  MQTT_URL: z
    .string()
    .regex(/^(mqtt|tcp):\/\//, "must be an mqtt:// URL")
    .optional(),
  MQTT_PORT: z.coerce.number().int().min(0).max(65535).default(1884),
  MQTT_PREFIX: z
    .string()
    .regex(/^[a-z0-9_-]+$/)
    .default("parking"),
  MQTT_USERNAME: z.string().default("cloud"),
  MQTT_PASSWORD: z.string().optional(),
  /**
   * The cloud's MQTT client id; MQTT_USERNAME when unset. The embedded broker lets the cloud's user in
   * under this id only; Mosquitto (use_username_as_clientid) replaces it with the user name.
   */
  MQTT_CLIENT_ID: z.string().min(1).optional(),
  /**
   * Shared-subscription group of the cloud's replicas on an external broker: each gateway message goes to
   * one replica of the group. Empty: plain subscriptions (every process gets every message). The
   * embedded broker has no shared subscriptions and ignores it.
   */
  MQTT_SHARE_GROUP: z
    .string()
    .regex(/^([A-Za-z0-9_-]{1,64})?$/, "letters, digits, '_' or '-' (at most 64), or empty")
    .default("parking-cloud"),
  /** HMAC key for access tokens (≥ 32 bytes); generated and kept in DATA_DIR when unset. */
  TOKEN_SECRET: z.string().min(32).optional(),
  /** Public base URL; the token issuer is `${AUTH_URL}` (default: the base URL). */
  BASE_URL: z.url().optional(),
  AUTH_URL: z.url().optional(),
  /** Minutes a console session may go unused before it is over. */
  CONSOLE_IDLE_MINUTES: z.coerce
    .number()
    .int()
    .min(1)
    .max(24 * 60)
    .default(30),
  /**
   * The console overview's map tiles: a URL template with {z}, {x} and {y}. Unset (the default) or empty:
   * no map, and the console asks no other site for anything.
   */
  CONSOLE_MAP_TILES: z.preprocess(
    (v) => (v === "" ? undefined : v),
    z
      .string()
      .check((ctx) => {
        const problem = tileTemplateProblem(ctx.value);
        if (problem) ctx.issues.push({ code: "custom", message: problem, input: ctx.value });
      })
      .optional(),
  ),
  /** Serves Prometheus /metrics on this port (on HOST) when set; none by default. */
  METRICS_PORT: z.coerce.number().int().min(0).max(65535).optional(),
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  /** json or pretty; unset: pretty on a terminal, JSON otherwise (shared/node/log.ts). */
  LOG_FORMAT: z.preprocess((v) => (v === "" ? undefined : v), z.enum(["json", "pretty"]).optional()),
});
export type CloudConfig = z.infer<typeof CloudConfig>;

/** A bad environment variable; the message names each one (with its value, unless it is a secret). */
export class CloudConfigError extends Error {}

export function loadCloudConfig(env: Record<string, string | undefined> = process.env): CloudConfig {
  const parsed = CloudConfig.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => {
      const name = i.path.join(".");
      // Secrets (and a database URL, which may hold a password) are named, never echoed.
      const shown = /SECRET|PASSWORD|DATABASE_URL/.test(name) ? name : `${name}=${env[name] ?? ""}`;
      return `  ${shown}: ${i.message}`;
    });
    throw new CloudConfigError(`invalid configuration:\n${lines.join("\n")}`);
  }
  return parsed.data;
}
