import type { CommandName } from "../../shared/domain/device-types.ts";

/**
 * Command event names (spec: Command events): REQUEST_* are the server's, RESPONSE_* the hardware's,
 * STATE_* a device state change.
 */
export function successEventFor(name: CommandName): string {
  switch (name) {
    case "lock":
    case "force-lock":
      return "RESPONSE_DEVICE_LOCKED";
    case "unlock":
    case "force-unlock":
      return "RESPONSE_DEVICE_UNLOCKED";
    case "sync-device":
      return "RESPONSE_DEVICE_SYNCED";
    case "take-photo":
      return "RESPONSE_PHOTO_TAKEN";
    case "book":
      return "STATE_BOOKED";
    case "cancel-booking":
    case "force-cancel-booking":
      return "STATE_BOOKING_CANCELLED";
  }
}

/**
 * Commands that move the device through an interim state while the hardware (for a book: the gateway's
 * store) works; the device follows their progress and a force command supersedes them.
 */
export function drivesDeviceState(name: CommandName): boolean {
  return (
    name === "lock" ||
    name === "unlock" ||
    name === "force-lock" ||
    name === "force-unlock" ||
    name === "book"
  );
}

/** Commands whose success ends the device's booking, whichever command holds the device then. */
export function endsBooking(name: CommandName): boolean {
  return name === "cancel-booking" || name === "force-cancel-booking";
}
