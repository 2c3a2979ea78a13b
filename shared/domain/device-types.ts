/** Device and command vocabularies of the spec (Resources → Device; Endpoints → Device and command). */
export const DEVICE_TYPES = [
  "GUARD",
  "BIKE_DOCK",
  "SCOOTER_DOCK",
  "LOCKER",
  "BIKE_HOUSE_DOOR",
  "BIKE_RENT",
  "SCOOTER_RENT",
  "DOCK",
  "DOCK_SESSIONLESS",
  "DOOR",
] as const;
export type DeviceType = (typeof DEVICE_TYPES)[number];

export const COMMAND_NAMES = [
  "lock",
  "unlock",
  "book",
  "cancel-booking",
  "force-lock",
  "force-unlock",
  "force-cancel-booking",
  "sync-device",
  "take-photo",
] as const;
export type CommandName = (typeof COMMAND_NAMES)[number];

export const POWER_SAVE_STRATEGIES = ["NONE", "REMOTE_WAKEUP", "LOCAL_WAKEUP"] as const;
export type PowerSaveStrategy = (typeof POWER_SAVE_STRATEGIES)[number];

export const SLEEP_STATES = ["", "LIGHT_SLEEP", "DEEP_SLEEP"] as const;
export type SleepState = (typeof SLEEP_STATES)[number];

/** How a device behaves, independent of its (possibly legacy) type name. */
export type DeviceFamily = "locking" | "door" | "guard" | "rental";

export function familyOf(type: DeviceType): DeviceFamily {
  switch (type) {
    case "LOCKER":
    case "BIKE_DOCK":
    case "DOCK": // spec rule 6: alias of BIKE_DOCK
    case "SCOOTER_DOCK":
    case "DOCK_SESSIONLESS":
      return "locking";
    case "BIKE_HOUSE_DOOR":
    case "DOOR": // spec rule 5: not yet synchronised doors, treated the same
      return "door";
    case "GUARD":
      return "guard";
    case "BIKE_RENT":
    case "SCOOTER_RENT":
      return "rental";
  }
}

/** Locking devices are what location `devices.total` counts (spec: Location). */
export function isLockingDevice(type: DeviceType): boolean {
  return familyOf(type) === "locking";
}

/** Locking devices take every command but take-photo (only a GUARD has a camera). */
const LOCKING_COMMANDS: readonly CommandName[] = COMMAND_NAMES.filter((c) => c !== "take-photo");

/** Bookings: recorded by the cloud and by the device's gateway (for local access); they never move the hardware. */
const BOOKING_COMMANDS: ReadonlySet<CommandName> = new Set([
  "book",
  "cancel-booking",
  "force-cancel-booking",
]);

/**
 * The commands a device accepts, in the order the `commands` map lists them.
 * Spec rules 4 and 5: a GUARD takes only take-photo, and only with a camera; a door only unlock.
 * A sessionless dock has no bookings (docs/decisions/commands.md).
 */
export function commandsFor(type: DeviceType, hasCamera: boolean): readonly CommandName[] {
  switch (familyOf(type)) {
    case "locking":
      return type === "DOCK_SESSIONLESS"
        ? LOCKING_COMMANDS.filter((c) => !BOOKING_COMMANDS.has(c))
        : LOCKING_COMMANDS;
    case "door":
      return ["unlock"];
    case "guard":
      return hasCamera ? ["take-photo"] : [];
    case "rental":
      return [];
  }
}

/**
 * Booking commands travel to the gateway like every command, but only its store records them: a device
 * asleep need not wake for one, and they are not throttled.
 */
export function isBookingCommand(name: CommandName): boolean {
  return BOOKING_COMMANDS.has(name);
}

/**
 * Commands that reach the hardware and are throttled per device (one every few seconds): the latch
 * commands, their force variants and sync-device, which may power-cycle the device.
 */
export function isThrottled(name: CommandName): boolean {
  return !BOOKING_COMMANDS.has(name) && name !== "take-photo";
}
