import { type CommandRequest, REASONS_NEEDING_COMMENT } from "../../shared/api/command.ts";
import type { ErrorCode } from "../../shared/api/errors.ts";
import {
  type CommandName,
  commandsFor,
  isBookingCommand,
  isThrottled,
} from "../../shared/domain/device-types.ts";
import { can, type Principal } from "../auth/principal.ts";
import { type CommandTimeoutConfig, throttleWindowMs } from "../devices/timeouts.ts";
import type { DeviceRecord } from "../store/device-record.ts";

/** Why a command is not accepted: what the API answers (an AppError once thrown). */
export type CommandRefusal = {
  code: ErrorCode;
  message: string;
  context: Record<string, unknown>;
  /** Extra response headers, e.g. Retry-After. */
  headers: Record<string, string>;
};

/** What a decision needs to know of the caller beyond the token, read from the store before deciding. */
export type CallerFacts = {
  /** Whom the command is for may use the device's location: on one of its access lists, or it has none. */
  hasAccess: boolean;
  /** A lock's user_id names a user of the operator (true when the lock names nobody). */
  onBehalfKnown: boolean;
};

export function refuse(
  code: ErrorCode,
  message: string,
  context: Record<string, unknown> = {},
  headers: Record<string, string> = {},
): CommandRefusal {
  return { code, message, context, headers };
}

/** Which request fields each command uses (spec: Command request body); any other field is a 400. */
export const FIELDS_OF: Partial<Record<CommandName, readonly (keyof CommandRequest)[]>> = {
  book: ["timeout_at"],
  lock: ["user_id"],
  "force-unlock": ["reason", "comment"],
  "sync-device": ["power_cycle"],
};

/** Operator functions: S2S clients with DEVICE_ADMIN only. A camera is the site's, not a rider's. */
const ADMIN_COMMANDS: ReadonlySet<CommandName> = new Set([
  "force-lock",
  "force-unlock",
  "force-cancel-booking",
  "sync-device",
  "take-photo",
]);

function invalid(field: string, message: string): CommandRefusal {
  return refuse("ERRORS.VALIDATION_FAILED", `${field}: ${message}`, { field });
}

/**
 * Checks a command request against the device and the caller, in the order a caller would fix them:
 * the device must accept the command, the caller must be allowed, then every field rule.
 * Returns the first refusal, or null.
 */
export function checkCommandRequest(
  body: CommandRequest,
  device: Pick<DeviceRecord, "type" | "has_camera">,
  principal: Principal,
  caller: CallerFacts,
  now: Date,
): CommandRefusal | null {
  const name = body.command;
  const accepted = commandsFor(device.type, device.has_camera);
  if (!accepted.includes(name)) {
    return refuse(
      "ERRORS.COMMAND_NOT_SUPPORTED",
      `A ${device.type} device does not accept ${name}; it accepts: ${accepted.join(", ") || "no commands"}`,
      { command: name, accepted },
    );
  }
  // Operator functions are closed to riders' tokens whatever they hold (S17); the operator's back end and
  // its staff in the console may hold them.
  if (ADMIN_COMMANDS.has(name) && principal.kind === "user") {
    return refuse("ERRORS.FORBIDDEN", `${name} is not available to external users`);
  }
  if (ADMIN_COMMANDS.has(name) && !can(principal, "DEVICE_ADMIN")) {
    return refuse("ERRORS.FORBIDDEN", `${name} needs the DEVICE_ADMIN permission`);
  }
  const allowed = FIELDS_OF[name] ?? [];
  for (const field of ["timeout_at", "user_id", "reason", "comment", "power_cycle"] as const) {
    if (body[field] !== undefined && !allowed.includes(field))
      return invalid(field, `is not used by ${name}`);
  }
  if (name === "book" && body.timeout_at !== undefined && Date.parse(body.timeout_at) <= now.getTime()) {
    return refuse("ERRORS.INVALID_TIMEOUT_AT", "timeout_at must be in the future", { field: "timeout_at" });
  }
  if (
    name === "lock" &&
    body.user_id !== undefined &&
    body.user_id !== principal.id &&
    !can(principal, "ACT_ON_BEHALF_OF")
  ) {
    return refuse("ERRORS.FORBIDDEN", "Locking for another user needs the ACT_ON_BEHALF_OF permission", {
      field: "user_id",
    });
  }
  // Asked only once the caller may name someone: whether a user exists is not told to anyone else.
  if (name === "lock" && body.user_id !== undefined && !caller.onBehalfKnown) {
    return refuse("ERRORS.UNKNOWN_USER", "user_id: is not a user of this operator", { field: "user_id" });
  }
  if (name === "force-unlock") {
    if (body.reason === undefined) return invalid("reason", "is required for force-unlock");
    if (REASONS_NEEDING_COMMENT.has(body.reason) && (body.comment ?? "").trim().length < 5) {
      return invalid("comment", `must be at least 5 characters when reason is ${body.reason}`);
    }
  }
  return null;
}

/**
 * What the device's present condition allows, after the request itself was found valid and the caller may
 * use the device: a device in deep sleep and the per-device throttle. Returns the first refusal, or null.
 */
export function checkDeviceAdmits(
  name: CommandName,
  device: Pick<DeviceRecord, "power_save_strategy" | "sleep_state" | "last_lock_command_at">,
  now: Date,
  cfg: CommandTimeoutConfig,
): CommandRefusal | null {
  const strategy = device.power_save_strategy;
  // LOCAL_WAKEUP devices in deep sleep wake only on a physical interaction (spec: Device). A booking needs
  // only the gateway's store, not the device.
  if (strategy === "LOCAL_WAKEUP" && device.sleep_state === "DEEP_SLEEP" && !isBookingCommand(name)) {
    return refuse(
      "ERRORS.DEVICE_ASLEEP",
      "The device is in deep sleep and wakes only on a physical interaction",
    );
  }
  if (isThrottled(name) && device.last_lock_command_at) {
    const windowMs = throttleWindowMs(cfg, strategy);
    const wait = Date.parse(device.last_lock_command_at) + windowMs - now.getTime();
    if (wait > 0) {
      return refuse(
        "ERRORS.LOCK_COMMAND_THROTTLED",
        `Another command that moves this device was sent less than ${windowMs / 1000} s ago`,
        {},
        { "retry-after": String(Math.ceil(wait / 1000)) },
      );
    }
  }
  return null;
}
