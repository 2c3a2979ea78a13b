/**
 * Who may use a device, given who holds it (docs/security.md, Ownership): one pure rule for the cloud (a
 * rider's or an integrator's command) and the edge (a tap of an RFID card), so both answer alike for the
 * same person, device and list. Each side gathers the facts in its own terms (a rider's id or a card id; a
 * lock recorded with the command or a latch sensed) and does what the rule says; the device's state machine
 * then says whether the use is possible at all (locking a locked locker, cancelling no booking).
 */

/** What someone asks of a locker, dock or door. */
export type Use = "lock" | "book" | "unlock" | "cancel-booking";

/**
 * Who asks: an opaque id (a rider's service_user_id, a card id) and whether they act for the site's operator
 * (an integrator's back end acting for no rider; a master key), who is not bound by who holds a device.
 */
export type Actor = { id: string; operator: boolean };

/** Who holds a device, as the side deciding knows it. */
export type Holding = {
  /** In use (locked, or a lock under way): true; free: false; not known yet (a latch never read): null. */
  inUse: boolean | null;
  /** Whom it is in use by, when known (the rider whose lock it is, the card that parked it); else null. */
  occupant: string | null;
  /** Who holds its running booking; null when none. */
  booker: string | null;
};

export type UseFacts = {
  /** Doors open for anyone with access; lockers and docks also ask who holds them. */
  family: "locking" | "door";
  use: Use;
  actor: Actor;
  holding: Holding;
  /**
   * The actor may use this device at all: a member of the lists that guard it (a rider on the location's
   * access list, or any rider where it has none; a card with a valid grant for it).
   */
  hasAccess: boolean;
};

/** Why a use is refused: no access to the device, or it is someone else's. */
export type UseRefusal = "no_access" | "held_by_another" | "booked_by_another" | "state_unknown";

/** On what ground a use is allowed: the actor holds the device, acts for the operator, or has access. */
export type UseGround = "holder" | "operator" | "member";

export type UseDecision = { allowed: true; as: UseGround } | { allowed: false; reason: UseRefusal };

const allow = (as: UseGround): UseDecision => ({ allowed: true, as });
const refuse = (reason: UseRefusal): UseDecision => ({ allowed: false, reason });

/**
 * The actor holds what this use would end: for an unlock, the device they are in (or, when nobody is in
 * it, the one they booked); for a cancel, their booking.
 */
export function releasesOwn({ use, actor, holding }: Pick<UseFacts, "use" | "actor" | "holding">): boolean {
  if (use === "unlock")
    return holding.inUse === false ? holding.booker === actor.id : holding.occupant === actor.id;
  if (use === "cancel-booking") return holding.booker === actor.id;
  return false;
}

/**
 * The rule, in order:
 * 1. What you hold you may release (unlock your locker, cancel your booking), whatever the lists say now:
 *    a member removed mid-session still gets their bike out.
 * 2. The operator may lock, book and unlock anything; cancelling someone else's booking stays
 *    force-cancel-booking's (spec: cancel-booking cancels "the user's" booking).
 * 3. Anyone else needs access: off the list, nothing opens.
 * 4. A door then opens. A locker or dock in use by someone else, or booked by someone else, is theirs; one
 *    whose latch was never read may be someone's, so it is refused too.
 */
export function decideUse(facts: UseFacts): UseDecision {
  const { family, use, actor, holding } = facts;
  if (releasesOwn(facts)) return allow("holder");
  if (actor.operator && use !== "cancel-booking") return allow("operator");
  if (!facts.hasAccess && !actor.operator) return refuse("no_access");
  if (family === "door") return allow("member");
  if (holding.inUse === null) return refuse("state_unknown");
  if (holding.inUse && holding.occupant !== actor.id) return refuse("held_by_another");
  if (holding.booker !== null && holding.booker !== actor.id) return refuse("booked_by_another");
  const holds = holding.booker === actor.id || (holding.inUse && holding.occupant === actor.id);
  return allow(holds ? "holder" : "member");
}
