import type { CommandEvent, CommandRequest } from "../../shared/api/command.ts";
import { type CommandState, initialCommandState } from "../../shared/domain/command-machine.ts";
import { isInterim, transitionDevice } from "../../shared/domain/device-machine.ts";
import { familyOf, isThrottled } from "../../shared/domain/device-types.ts";
import type { CommandRequest as WireCommand } from "../../shared/wire/messages.ts";
import type { Principal } from "../auth/principal.ts";
import type { DeviceChanges } from "../devices/device-repository.ts";
import { type CommandTimeoutConfig, timeoutsFor } from "../devices/timeouts.ts";
import type { CommandRecord } from "../store/command-record.ts";
import type { DeviceRecord } from "../store/device-record.ts";
import { drivesDeviceState } from "./command-events.ts";
import {
  type CallerFacts,
  type CommandRefusal,
  checkCommandRequest,
  checkDeviceAdmits,
  refuse,
} from "./command-rules.ts";
import { checkOwnership } from "./device-holding.ts";

/** What the decision reads of the device. */
export type DeviceFacts = Pick<
  DeviceRecord,
  | "id"
  | "type"
  | "has_camera"
  | "power_save_strategy"
  | "sleep_state"
  | "state"
  | "command_id"
  | "last_lock_command_at"
  | "booked_by"
  | "user_id"
>;

/** A command POST: the id the caller chose for the new command (the idempotency key end to end) and the body. */
export type CommandAsked = { id: string; body: CommandRequest };

export type CommandAcceptance = {
  accepted: true;
  /** What changes on the device; written only if the device is still as it was read. */
  device: DeviceChanges;
  /** The new command as stored: its initial state and events, and the wire request. */
  command: CommandRecord;
  /** The command in flight this one takes over; it ends now with this reason (REQUEST_SUPERSEDED). */
  supersedes: { id: string; reason: string } | null;
};

export type CommandDecision = CommandAcceptance | { accepted: false; refusal: CommandRefusal };

/**
 * Everything the command POST decides (flow 1), as a pure function of the device as read, the caller (its
 * token and what the store says of whom it acts for), the request and `now`: the request's rules, whether
 * the device is the caller's to use (the ownership rule), what the device's condition admits, the state
 * machine's transition, and what changes where. The caller writes an acceptance with a compare-and-set and
 * decides again if the device changed meanwhile.
 */
export function decideCommand(
  device: DeviceFacts,
  principal: Principal,
  caller: CallerFacts,
  asked: CommandAsked,
  now: Date,
  limits: CommandTimeoutConfig,
): CommandDecision {
  const { id, body } = asked;
  const name = body.command;
  const refusal =
    checkCommandRequest(body, device, principal, caller, now) ??
    checkOwnership(body, device, principal, caller) ??
    checkDeviceAdmits(name, device, now, limits);
  if (refusal) return { accepted: false, refusal };

  const t = timeoutsFor(limits, device.power_save_strategy);
  const tr = transitionDevice(familyOf(device.type), device.state, { kind: "command", name }, now, t);
  if (tr.refused) {
    return {
      accepted: false,
      refusal: refuse("ERRORS.COMMAND_NOT_ALLOWED_IN_STATE", tr.message, { state: device.state.value }),
    };
  }

  const ts = now.toISOString();
  const events: CommandEvent[] = [{ name: "REQUEST_INITIATED", timestamp: ts }];
  const state: CommandState = initialCommandState(now, t);
  // A force command takes over the command in flight, on the gateway too (it names what it supersedes).
  const supersedes = drivesDeviceState(name) && device.command_id ? device.command_id : null;
  // A booking ends at timeout_at, by default one hour from the command (spec: Limits); the gateway records
  // it, and the device is BOOKED once the gateway has confirmed.
  const booking =
    name === "book"
      ? {
          holder: principal.id,
          until: new Date(body.timeout_at ?? now.getTime() + t.bookingMs).toISOString(),
        }
      : undefined;
  const wire: WireCommand = {
    command_id: id,
    device_id: device.id,
    name,
    params: { power_cycle: body.power_cycle, reason: body.reason, comment: body.comment, booking },
    issued_at: ts,
    expires_at: state.timeout_at ?? ts,
    ...(supersedes ? { supersedes } : {}),
  };

  const changes: DeviceChanges = tr.changed ? { state: tr.state } : {};
  if (drivesDeviceState(name)) changes.command_id = id;
  else if (tr.changed && !isInterim(tr.state.value)) changes.command_id = null;
  if (isThrottled(name)) changes.last_lock_command_at = ts;
  // A rider's lock without user_id targets the caller: they are the occupant.
  if (name === "lock") changes.user_id = body.user_id ?? (principal.kind === "user" ? principal.id : null);
  if (name === "book") changes.booked_by = principal.id;
  if (tr.changed && tr.state.value === "UNLOCKED") {
    changes.booked_by = null;
    changes.user_id = null;
  }

  return {
    accepted: true,
    device: changes,
    command: {
      id,
      operator_id: principal.operatorId,
      device_id: device.id,
      name,
      state,
      params: body,
      requested_by: principal.id,
      events,
      wire_request: wire,
      created_at: ts,
      updated_at: ts,
    },
    supersedes: supersedes ? { id: supersedes, reason: `superseded by ${name}` } : null,
  };
}
