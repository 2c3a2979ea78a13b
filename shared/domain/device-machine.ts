/**
 * The API-level device state machine (spec: States and transitions → Device state), as a pure function.
 * The caller owns time and I/O: it feeds an input and `now`, and persists what comes back.
 *
 * Stable states: UNLOCKED, BOOKED, LOCKED. Interim states: ALLOCATED, LOCKING, UNLOCKING; each carries a
 * deadline in `timeout_at` and remembers in `restore` the stable state to return to if its command fails.
 * A book holds the device ALLOCATED until its gateway has recorded the booking, then it is BOOKED;
 * cancel-booking and force-cancel-booking end a booking when their gateway confirms it ended.
 * Doors use inverted logic: LOCKED is their ready state; UNLOCKED is the released lock, which re-locks
 * when its `timeout_at` passes.
 *
 * The hardware is the truth (ARCHITECTURE flow 6): outside a command in flight, `state` follows the last
 * sensor report (`sensed`); during one, the command's outcome settles it.
 */
import type { CommandName, DeviceFamily } from "./device-types.ts";

export const DEVICE_STATE_VALUES = [
  "ALLOCATED",
  "LOCKED",
  "LOCKING",
  "UNLOCKED",
  "UNLOCKING",
  "BOOKED",
] as const;
export type DeviceStateValue = (typeof DEVICE_STATE_VALUES)[number];

export type StableState = { value: DeviceStateValue; timeout_at: string | null };

export type DeviceState = {
  value: DeviceStateValue;
  changed_at: string;
  /** RFC 3339 or null: null means the state does not time out. */
  timeout_at: string | null;
  /** Set only in interim states: what a failed command returns the device to. */
  restore: StableState | null;
};

export type LockState = "LOCKED" | "UNLOCKED";

export type DeviceTimeouts = {
  /** Window for the gateway to take a command (ALLOCATED). */
  deliveryMs: number;
  /** Window for the hardware to confirm once the gateway has the command (LOCKING, UNLOCKING). */
  hardwareMs: number;
  /** Default booking length when `book` has no timeout_at: 1 hour (spec: Limits). */
  bookingMs: number;
  /** How long a released door stays UNLOCKED before it re-locks. */
  doorReleaseMs: number;
};

export type DeviceInput =
  /** A command was accepted: move into its interim state (or stay, for a command that ends a booking). */
  | { kind: "command"; name: CommandName }
  /** The gateway took the command to the hardware: the delivery window becomes the hardware window. */
  | { kind: "received"; name: CommandName }
  /**
   * The hardware confirmed the command (for a booking command: the gateway recorded it). `bookingUntil`
   * is when the booking a confirmed book made ends; without it, `bookingMs` from now.
   */
  | { kind: "confirmed"; name: CommandName; bookingUntil?: string }
  /**
   * The command ended in ERROR: go back to the remembered stable state. `heldByAnother`: the gateway
   * refused because the device is someone else's (the machine ignores it; the occupant does not stay).
   */
  | { kind: "failed"; heldByAnother?: boolean }
  /**
   * `timeout_at` has passed. `lockState` is the last sensor report: a released door whose lock still
   * reads unlocked (held open) waits for the hardware to say it re-engaged instead of guessing.
   */
  | { kind: "expired"; lockState?: LockState | null }
  /**
   * The sensors report the physical lock state (a reading, or a change no command caused). `doorReleased`:
   * the gateway released a door for its release window (a card tap), so it re-locks `doorReleaseMs` later,
   * as after an unlock command.
   */
  | { kind: "sensed"; lockState: LockState; doorReleased?: boolean };

export type Refusal = { refused: true; code: "COMMAND_NOT_ALLOWED_IN_STATE"; message: string };
export type Transition = { refused: false; state: DeviceState; changed: boolean };

const INTERIM: ReadonlySet<DeviceStateValue> = new Set(["ALLOCATED", "LOCKING", "UNLOCKING"]);

export function isInterim(value: DeviceStateValue): boolean {
  return INTERIM.has(value);
}

/** The state a door or locker settles in when nothing is happening. */
export function readyState(family: DeviceFamily): DeviceStateValue {
  return family === "door" ? "LOCKED" : "UNLOCKED";
}

function at(now: Date, ms: number): string {
  return new Date(now.getTime() + ms).toISOString();
}

function stableOf(s: DeviceState): StableState {
  return s.restore ?? { value: s.value, timeout_at: s.timeout_at };
}

function move(
  value: DeviceStateValue,
  now: Date,
  timeout_at: string | null,
  restore: StableState | null,
): Transition {
  return {
    refused: false,
    changed: true,
    state: { value, changed_at: now.toISOString(), timeout_at, restore },
  };
}

/** The same state value with other details changed (its `changed_at` stays: the value did not change). */
function amend(s: DeviceState, patch: Partial<Pick<DeviceState, "timeout_at" | "restore">>): Transition {
  return { refused: false, changed: true, state: { ...s, ...patch } };
}

function stay(s: DeviceState): Transition {
  return { refused: false, changed: false, state: s };
}

function refuse(name: string, s: DeviceState): Refusal {
  return {
    refused: true,
    code: "COMMAND_NOT_ALLOWED_IN_STATE",
    message: `Command ${name} is not allowed while the device is ${s.value}`,
  };
}

export function transitionDevice(
  family: DeviceFamily,
  s: DeviceState,
  input: DeviceInput,
  now: Date,
  t: DeviceTimeouts,
): Transition | Refusal {
  switch (input.kind) {
    case "command":
      return onCommand(family, s, input.name, now, t);
    case "received": {
      // The delivery deadline is replaced by the hardware confirmation window (ALLOCATED → LOCKING); a
      // book stays ALLOCATED until its gateway confirms.
      if (!isInterim(s.value)) return stay(s);
      const locking = s.value === "ALLOCATED" && input.name !== "book";
      return move(locking ? "LOCKING" : s.value, now, at(now, t.hardwareMs), s.restore);
    }
    case "confirmed":
      if (input.name === "book") return onBooked(s, now, input.bookingUntil ?? at(now, t.bookingMs));
      if (input.name === "cancel-booking" || input.name === "force-cancel-booking")
        return onBookingEnded(s, now);
      if (s.value === "LOCKING" || s.value === "ALLOCATED") return move("LOCKED", now, null, null);
      if (s.value === "UNLOCKING") {
        // A released door re-locks after its window; a locker or dock is simply available again.
        return move("UNLOCKED", now, family === "door" ? at(now, t.doorReleaseMs) : null, null);
      }
      return stay(s);
    case "failed":
      if (!s.restore) return stay(s);
      return move(s.restore.value, now, s.restore.timeout_at, null);
    case "expired":
      return onExpired(family, s, now, input.lockState ?? null);
    case "sensed":
      if (input.doorReleased && family === "door" && input.lockState === "UNLOCKED")
        return onDoorReleased(s, now, t);
      return onSensed(family, s, input.lockState, now);
  }
}

/** The gateway recorded a booking: the device held for it is BOOKED until the booking ends. */
function onBooked(s: DeviceState, now: Date, until: string): Transition {
  if (s.value !== "ALLOCATED") return stay(s);
  // A booking that ended before its gateway confirmed it leaves the device available.
  if (Date.parse(until) <= now.getTime()) return move("UNLOCKED", now, null, null);
  return move("BOOKED", now, new Date(until).toISOString(), null);
}

/**
 * The gateway ended a booking: a BOOKED device is available again; under a lock in flight the booking
 * the lock would fall back to is dropped. Without a booking nothing changes.
 */
function onBookingEnded(s: DeviceState, now: Date): Transition {
  if (s.value === "BOOKED") return move("UNLOCKED", now, null, null);
  if (s.restore?.value === "BOOKED") return amend(s, { restore: { value: "UNLOCKED", timeout_at: null } });
  return stay(s);
}

/**
 * Reconciliation: a stable state that contradicts the sensors gives way to them. A locking device found
 * locked is in use (LOCKED; a booking is over), one found unlocked is free (UNLOCKED); a door follows its
 * lock. Interim states are left to their command, whose outcome settles any disagreement.
 */
function onSensed(family: DeviceFamily, s: DeviceState, lock: LockState, now: Date): Transition {
  if (isInterim(s.value) || (family !== "locking" && family !== "door")) return stay(s);
  if (lock === "LOCKED") return s.value === "LOCKED" ? stay(s) : move("LOCKED", now, null, null);
  if (s.value !== "LOCKED") return stay(s);
  // A door found released by other means (held, a technician) waits for the hardware to report it
  // re-engaged: no predicted re-lock.
  return move("UNLOCKED", now, null, null);
}

/**
 * A door the gateway released for its window (a tap): UNLOCKED until it re-locks, like a door an unlock
 * command opened; a tap on a door still released starts its window again. A command in flight settles it.
 */
function onDoorReleased(s: DeviceState, now: Date, t: DeviceTimeouts): Transition {
  if (isInterim(s.value)) return stay(s);
  const relockAt = at(now, t.doorReleaseMs);
  if (s.value !== "UNLOCKED") return move("UNLOCKED", now, relockAt, null);
  return s.timeout_at === relockAt ? stay(s) : amend(s, { timeout_at: relockAt });
}

function onExpired(family: DeviceFamily, s: DeviceState, now: Date, lock: LockState | null): Transition {
  if (s.timeout_at === null || new Date(s.timeout_at).getTime() > now.getTime()) return stay(s);
  if (s.value === "BOOKED") return move("UNLOCKED", now, null, null);
  if (s.value === "UNLOCKED" && family === "door") {
    // The release window is over, but a lock that still reads unlocked (a door held open) has not
    // re-engaged: stay UNLOCKED until the sensors say otherwise.
    if (lock === "UNLOCKED") return amend(s, { timeout_at: null });
    return move("LOCKED", now, null, null);
  }
  if (isInterim(s.value) && s.restore) {
    const back = s.restore;
    // A booking that ran out while a lock was in flight is over: go to UNLOCKED, not back to BOOKED.
    const bookingOver =
      back.value === "BOOKED" && back.timeout_at !== null && Date.parse(back.timeout_at) <= now.getTime();
    return move(bookingOver ? "UNLOCKED" : back.value, now, bookingOver ? null : back.timeout_at, null);
  }
  return stay(s);
}

function onCommand(
  family: DeviceFamily,
  s: DeviceState,
  name: CommandName,
  now: Date,
  t: DeviceTimeouts,
): Transition | Refusal {
  const delivery = at(now, t.deliveryMs);
  // LOCKING/UNLOCKING carry the hardware confirmation window (spec): before the gateway has taken the
  // command that window starts at the delivery deadline at the latest.
  const confirmation = at(now, t.deliveryMs + t.hardwareMs);
  switch (name) {
    case "book":
      // Held for the booker, like a lock (spec: ALLOCATED prevents other users from claiming it), until
      // the gateway has recorded the booking (then BOOKED) or the command fails (back to UNLOCKED).
      if (s.value !== "UNLOCKED") return refuse(name, s);
      return move("ALLOCATED", now, delivery, stableOf(s));
    case "cancel-booking":
      // The booking stays until the gateway confirms it ended (`confirmed`); a failed cancel keeps it.
      if (s.value !== "BOOKED") return refuse(name, s);
      return stay(s);
    case "force-cancel-booking":
      // Bypasses the state checks (spec); it ends whatever booking there is when the gateway confirms.
      return stay(s);
    case "lock":
      // The lock first holds the device as ALLOCATED so no one else can claim it (spec: Device state).
      if (s.value !== "UNLOCKED" && s.value !== "BOOKED") return refuse(name, s);
      return move("ALLOCATED", now, delivery, stableOf(s));
    case "unlock":
      if (family === "door") {
        if (s.value !== "LOCKED" && s.value !== "UNLOCKED") return refuse(name, s);
        return move("UNLOCKING", now, confirmation, stableOf(s));
      }
      if (s.value !== "LOCKED") return refuse(name, s);
      return move("UNLOCKING", now, confirmation, stableOf(s));
    case "force-lock":
      // Force commands bypass the state checks (spec); they still remember where to go back to.
      return move("LOCKING", now, confirmation, stableOf(s));
    case "force-unlock":
      return move("UNLOCKING", now, confirmation, stableOf(s));
    case "sync-device":
    case "take-photo":
      return stay(s);
  }
}
