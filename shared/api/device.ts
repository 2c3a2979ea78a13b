import { z } from "zod";
import { DEVICE_STATE_VALUES } from "../domain/device-machine.ts";
import { COMMAND_NAMES, DEVICE_TYPES, POWER_SAVE_STRATEGIES, SLEEP_STATES } from "../domain/device-types.ts";
import { HEALTH_VALUES } from "../domain/health.ts";
import { Reference } from "./common.ts";

export const HARDWARE_STATES = [
  "NORMAL",
  "DISABLED",
  "DISABLED_LOCKING",
  "DISABLED_UNLOCKING",
  "ERROR",
  "NOT_RESPONDING",
] as const;
export type HardwareState = (typeof HARDWARE_STATES)[number];

export const Device = z
  .object({
    id: z.uuid(),
    uri: z.string(),
    type: z.enum(DEVICE_TYPES),
    alias: z.string(),
    code: z.string(),
    nr: z.string().describe("Deprecated: use alias"),
    state: z.object({
      changed_at: z.string(),
      value: z.enum(DEVICE_STATE_VALUES),
      timeout_at: z.string().nullable().describe("null means the state does not time out"),
    }),
    lock_state: z.enum(["LOCKED", "UNLOCKED"]),
    hardware_state: z.enum(HARDWARE_STATES),
    heartbeat_v2: z
      .object({
        health: z.enum(HEALTH_VALUES),
        dead_since: z.string().nullable(),
        sent_at: z.string().nullable().describe("Deprecated"),
        latency_millis: z.number().nullable().describe("Deprecated"),
      })
      .nullable(),
    heartbeat_health: z
      .enum(["HEALTHY", "UNHEALTHY", "DEAD"])
      .nullable()
      .describe("Deprecated: use heartbeat_v2"),
    heartbeat: z.string().nullable().describe("Deprecated"),
    heartbeat_latency: z.null().describe("Deprecated: always null"),
    wifi_rssi: z.null().describe("Deprecated: always null"),
    sleep_state: z.enum(SLEEP_STATES),
    power_save_strategy: z.enum(POWER_SAVE_STRATEGIES),
    commands: z.partialRecord(z.enum(COMMAND_NAMES), z.string()).describe("Command name → command URI"),
    has_otp_support: z.boolean(),
    has_access_lists: z.boolean(),
    has_allowlist: z.boolean(),
    has_subscription: z.boolean(),
    has_camera: z.boolean(),
    price_list: Reference.nullable(),
    location: Reference,
    user: z
      .object({ access_key: z.string().nullable(), id: z.string().nullable() })
      .nullable()
      .optional()
      .describe("Current occupant; needs the DEVICE_PRIVATE_FIELDS permission"),
    settings: z
      .object({ updated_at: z.string(), created_at: z.string(), deep_link: z.string() })
      .optional()
      .describe("Needs the DEVICE_PRIVATE_FIELDS permission"),
    tags: z.array(z.string()),
    comment: z.string(),
    hardware_id: z.string(),
  })
  .meta({ id: "Device" });
export type Device = z.infer<typeof Device>;

export const DeviceList = z.object({ data: z.array(Device), uri: z.string() }).meta({ id: "DeviceList" });
