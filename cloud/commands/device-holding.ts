import type { CommandRequest } from "../../shared/api/command.ts";
import { type CommandName, familyOf } from "../../shared/domain/device-types.ts";
import { type Actor, decideUse, type Holding, type Use } from "../../shared/domain/device-use.ts";
import type { Principal } from "../auth/principal.ts";
import type { DeviceRecord } from "../store/device-record.ts";
import { type CallerFacts, type CommandRefusal, refuse } from "./command-rules.ts";

/** The commands whose use depends on who holds the device; force commands bypass it (DEVICE_ADMIN). */
const USES: ReadonlySet<CommandName> = new Set<Use>(["lock", "book", "unlock", "cancel-booking"]);
const isUse = (name: CommandName): name is Use => USES.has(name);

/**
 * Whom a command acts for: a rider for themself; an integrator's lock naming a rider (ACT_ON_BEHALF_OF) for
 * that rider, bound by the same rule; any other S2S command for the operator (spec: S2S is the operator's
 * back end). Null for commands that do not use the device as someone's (force commands, sync, photos).
 */
export function actorOf(principal: Principal, body: CommandRequest): Actor | null {
  if (!isUse(body.command)) return null;
  if (principal.kind === "user") return { id: principal.id, operator: false };
  if (body.command === "lock" && body.user_id !== undefined) return { id: body.user_id, operator: false };
  return { id: principal.id, operator: true };
}

/**
 * Who holds a device, from what the cloud recorded: the occupant a lock named from the moment it was
 * accepted until the device is free again, the booker of a booking (or of a book in flight). A device
 * locked without a known occupant (by an integrator for nobody, by a card, by hand) is in use by someone.
 */
export function holdingOf(device: Pick<DeviceRecord, "state" | "user_id" | "booked_by">): Holding {
  const value = device.state.value;
  // ALLOCATED holds a lock or a book in flight; a book's names its booker.
  const inUse =
    device.user_id !== null ||
    value === "LOCKED" ||
    value === "LOCKING" ||
    value === "UNLOCKING" ||
    (value === "ALLOCATED" && device.booked_by === null);
  return { inUse, occupant: device.user_id, booker: device.booked_by };
}

/**
 * The ownership rule (shared/domain/device-use.ts) for a command: refused when the device is someone else's
 * or the person it is for has no access. Null when the command may go on to the state machine.
 */
export function checkOwnership(
  body: CommandRequest,
  device: Pick<DeviceRecord, "type" | "state" | "user_id" | "booked_by">,
  principal: Principal,
  caller: CallerFacts,
): CommandRefusal | null {
  const name = body.command;
  const actor = actorOf(principal, body);
  const family = familyOf(device.type);
  if (!actor || !isUse(name) || (family !== "locking" && family !== "door")) return null;
  const decided = decideUse({
    family,
    use: name,
    actor,
    holding: holdingOf(device),
    hasAccess: caller.hasAccess,
  });
  if (decided.allowed) return null;
  const forWhom = principal.kind === "user" ? "" : ` for user ${actor.id}`;
  switch (decided.reason) {
    case "no_access":
      return refuse("ERRORS.ACCESS_DENIED", `Only members of this location's access lists may ${name} here`, {
        command: name,
      });
    case "held_by_another":
      return refuse(
        "ERRORS.FORBIDDEN",
        `The device is in use by someone else; ${name}${forWhom} is refused`,
        {
          command: name,
        },
      );
    case "booked_by_another":
      return refuse(
        "ERRORS.FORBIDDEN",
        principal.kind === "client" && name === "cancel-booking"
          ? "The booking belongs to someone else; use force-cancel-booking"
          : `The device is booked by someone else; ${name}${forWhom} is refused`,
        { command: name },
      );
    case "state_unknown":
      return refuse("ERRORS.FORBIDDEN", "Whether the device is in use is not known yet", { command: name });
  }
}
