/**
 * The access decision at the edge (ARCHITECTURE flow 2, STYLE principle 3): a pure function of the card,
 * `now`, the device tapped and what the gateway knows about it. The gateway's tap handler gathers the
 * context, calls `decideTap`, and does what it says; the cloud keeps the outcome as an access event.
 */
import type { Grant } from "../wire/messages.ts";
import { DEVICE_TYPES, type DeviceType, familyOf } from "./device-types.ts";
import { decideUse, type Use } from "./device-use.ts";

/** Why a tap was granted or refused, as `AccessDecision.reason` carries it (shared/wire/messages.ts). */
export type TapReason =
  | "whitelisted"
  | "master_key"
  | "parked"
  | "retrieved"
  | "unknown_card"
  | "inactive"
  | "expired"
  | "not_targeted"
  | "occupied"
  | "booked"
  | "no_rfid_parking"
  | "unknown_state"
  | "no_device"
  | "offline_unknown"
  | "actuation_failed"
  | "asleep";

export type TapAction = "unlock" | "lock" | "none";

/** What the tap should do, and why. */
export type TapDecision = {
  granted: boolean;
  action: TapAction;
  reason: TapReason;
  /** The whitelist whose grant decided it (an inactive or expired one for such a refusal); else null. */
  whitelist_id: string | null;
};

/** The device a reader serves, as the gateway's device map has it. */
export type TapDevice = { device_id: string; type: string; location_id: string | null };

export type TapContext = {
  card: string;
  now: Date;
  /** null: the reader is mapped to no device this gateway drives. */
  device: TapDevice | null;
  /** The location's `rfid_parking`: a tap on a free locker or dock locks it for that card. */
  rfidParking: boolean;
  /** The card's grants, held in the local cache or answered by the cloud. */
  grants: readonly Grant[];
  /**
   * The latch as sensed (null: not read yet), and the card that parked the device under rfid_parking
   * (null: none, or the device was unlocked since).
   */
  occupancy: { locked: boolean | null; parkedBy: string | null };
  /** The device's booking, if one is running. */
  booking: { holder: string } | null;
};

const refuse = (reason: TapReason, whitelistId: string | null = null): TapDecision => ({
  granted: false,
  action: "none",
  reason,
  whitelist_id: whitelistId,
});

const grant = (action: TapAction, reason: TapReason, whitelistId: string | null): TapDecision => ({
  granted: true,
  action,
  reason,
  whitelist_id: whitelistId,
});

const isDeviceType = (t: string): t is DeviceType => (DEVICE_TYPES as readonly string[]).includes(t);

/** Why a grant does not open this device now; null when it does. */
export function grantFailure(
  g: Grant,
  device: TapDevice,
  now: Date,
): "not_targeted" | "inactive" | "expired" | null {
  const targeted =
    g.device_ids.includes(device.device_id) ||
    (device.location_id !== null && g.location_ids.includes(device.location_id));
  if (!targeted) return "not_targeted";
  if (g.status !== "ACTIVE") return "inactive";
  // Entities stop working at expires_at, whatever the cache still holds (the sweep only tidies up).
  if (g.expires_at !== null && Date.parse(g.expires_at) <= now.getTime()) return "expired";
  return null;
}

/** How close a failing grant came to opening: the closest one is the most telling refusal. */
const CLOSENESS = { not_targeted: 0, inactive: 1, expired: 2 } as const;

/**
 * Decides a tap. The rules, in order:
 * 1. No device, a GUARD, or a type local access does not serve (rentals) → `no_device`.
 * 2. Who may use the device is the ownership rule the cloud applies to commands (`decideUse`): the card
 *    is the actor, a valid master key acts for the operator, a valid grant is access; a tap asks to unlock
 *    a door, or a locker or dock that is (or may be) in use, and to lock a free one. So:
 *    - a locker or dock this card parked under rfid_parking, not sensed free since → unlock (`retrieved`),
 *      whatever the card's grants say now: the bike inside is theirs;
 *    - no grants → `unknown_card`; grants of which none is valid (ACTIVE, not expired, targeting the device
 *      or its location) → the closest miss: `expired`, else `inactive`, else `not_targeted`;
 *    - doors → unlock (`whitelisted`, or `master_key` when only a master key holds);
 *    - lockers and docks: occupied → a master key unlocks (`master_key`), else `occupied`; latch not read
 *      yet → a master key unlocks, else `unknown_state` (locking it for this card could hand them someone
 *      else's bike); free → someone else's booking refuses (`booked`) unless a master key.
 * 3. A free locker or dock is locked for this card (`parked`) only where the location has rfid_parking,
 *    else `no_rfid_parking`.
 */
export function decideTap(ctx: TapContext): TapDecision {
  const { device, card, now } = ctx;
  if (!device || !isDeviceType(device.type)) return refuse("no_device");
  const family = familyOf(device.type);
  if (family !== "door" && family !== "locking") return refuse("no_device");
  const { locked, parkedBy } = ctx.occupancy;

  const valid: Grant[] = [];
  let miss: { reason: "not_targeted" | "inactive" | "expired"; grant: Grant } | null = null;
  for (const g of ctx.grants) {
    const why = grantFailure(g, device, now);
    if (why === null) valid.push(g);
    else if (!miss || CLOSENESS[why] > CLOSENESS[miss.reason]) miss = { reason: why, grant: g };
  }
  const master = valid.find((g) => g.is_master_key) ?? null;
  const plain = valid.find((g) => !g.is_master_key) ?? null;

  const use: Use = family === "door" || locked !== false ? "unlock" : "lock";
  // Cards and riders are kept apart: a booking is a rider's (or a client's), and no card is its holder.
  const decided = decideUse({
    family,
    use,
    actor: { id: `card:${card}`, operator: master !== null },
    holding: {
      inUse: locked,
      occupant: locked !== false && parkedBy !== null ? `card:${parkedBy}` : null,
      booker: ctx.booking ? `booking:${ctx.booking.holder}` : null,
    },
    hasAccess: valid.length > 0,
  });
  if (!decided.allowed) {
    switch (decided.reason) {
      case "no_access":
        if (!miss) return refuse("unknown_card");
        return refuse(miss.reason, miss.reason === "not_targeted" ? null : miss.grant.whitelist_id);
      case "held_by_another":
        return refuse("occupied");
      case "state_unknown":
        return refuse("unknown_state");
      case "booked_by_another":
        return refuse("booked");
    }
  }
  if (decided.as === "holder" && use === "unlock") return grant("unlock", "retrieved", null);
  if (family === "door") {
    return plain
      ? grant("unlock", "whitelisted", plain.whitelist_id)
      : grant("unlock", "master_key", master?.whitelist_id ?? null);
  }
  if (use === "unlock") return grant("unlock", "master_key", master?.whitelist_id ?? null);
  if (!ctx.rfidParking) return refuse("no_rfid_parking");
  const by = plain ?? master;
  return grant("lock", "parked", by?.whitelist_id ?? null);
}
