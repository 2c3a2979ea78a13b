import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { decideTap, type TapContext } from "../../shared/domain/access-decision.ts";
import type { DeviceState } from "../../shared/domain/device-machine.ts";
import type { Grant } from "../../shared/wire/messages.ts";
import type { Principal } from "../auth/principal.ts";
import { DEFAULT_COMMAND_TIMEOUTS } from "../devices/timeouts.ts";
import { type DeviceFacts, decideCommand } from "./decide-command.ts";

/**
 * The edge and the cloud apply one ownership rule (shared/domain/device-use.ts): for the same person, device
 * and list, a tap of the person's card at the gateway and the command the person's app would send for the
 * same use are both allowed or both refused. A master key is the operator's card; its cloud counterpart is
 * the operator's back end. The gateway knows whom a device is in use by through the card that parked it,
 * the cloud through the rider whose lock it is; a booking is always a rider's.
 */
const NOW = new Date("2026-03-02T09:00:00.000Z");
const LOCATION = "10000000-0000-4000-8000-000000000001";
const DEVICE = "20000000-0000-4000-8000-000000000001";
const WHITELIST = "30000000-0000-4000-8000-000000000001";
const PERSON = "0a0b0c0d";
const OTHER = "0e0f1011";

type Situation = {
  family: "locking" | "door";
  /** A locker's latch: engaged (in use) or free. Doors rest locked. */
  locked: boolean;
  /** Whom the locker is in use by: the person, someone else, or nobody known. */
  occupant: "person" | "other" | "unknown";
  /** A booking of a free locker: someone else's, or none. */
  bookedByOther: boolean;
  /** The person is on the list that guards the device. */
  onList: boolean;
  /** The person acts for the operator (a master key; the operator's back end). */
  operator: boolean;
};

const situationArb: fc.Arbitrary<Situation> = fc
  .record({
    family: fc.constantFrom("locking" as const, "door" as const),
    locked: fc.boolean(),
    occupant: fc.constantFrom("person" as const, "other" as const, "unknown" as const),
    bookedByOther: fc.boolean(),
    onList: fc.boolean(),
    operator: fc.boolean(),
  })
  // A master key is a valid grant: whoever acts for the operator is on the list.
  .map((s) => ({ ...s, onList: s.onList || s.operator }));

const idOf = (who: Situation["occupant"]) => (who === "person" ? PERSON : who === "other" ? OTHER : null);

function tapOf(s: Situation): TapContext {
  const grant: Grant = {
    card_id: PERSON,
    whitelist_id: WHITELIST,
    status: "ACTIVE",
    expires_at: null,
    is_master_key: s.operator,
    location_ids: [LOCATION],
    device_ids: [],
  };
  const locker = s.family === "locking";
  return {
    card: PERSON,
    now: NOW,
    device: { device_id: DEVICE, type: locker ? "LOCKER" : "BIKE_HOUSE_DOOR", location_id: LOCATION },
    rfidParking: true,
    grants: s.onList ? [grant] : [],
    occupancy:
      locker && s.locked ? { locked: true, parkedBy: idOf(s.occupant) } : { locked: !locker, parkedBy: null },
    booking: locker && !s.locked && s.bookedByOther ? { holder: OTHER } : null,
  };
}

/** The same situation as the cloud holds it, and the command the person's use is there. */
function commandOf(s: Situation) {
  const locker = s.family === "locking";
  const booked = locker && !s.locked && s.bookedByOther;
  const value = !locker || s.locked ? "LOCKED" : booked ? "BOOKED" : "UNLOCKED";
  const state: DeviceState = { value, changed_at: NOW.toISOString(), timeout_at: null, restore: null };
  const device: DeviceFacts = {
    id: DEVICE,
    type: locker ? "LOCKER" : "BIKE_HOUSE_DOOR",
    has_camera: false,
    power_save_strategy: "NONE",
    sleep_state: "",
    state,
    command_id: null,
    last_lock_command_at: null,
    booked_by: booked ? OTHER : null,
    user_id: locker && s.locked ? idOf(s.occupant) : null,
  };
  const principal: Principal = s.operator
    ? { kind: "client", id: "backend", operatorId: "op", permissions: new Set() }
    : { kind: "user", id: PERSON, operatorId: "op", permissions: new Set() };
  const command = !locker || s.locked ? ("unlock" as const) : ("lock" as const);
  const decision = decideCommand(
    device,
    principal,
    { hasAccess: s.onList, onBehalfKnown: true },
    { id: "40000000-0000-4000-8000-000000000001", body: { command } },
    NOW,
    DEFAULT_COMMAND_TIMEOUTS,
  );
  return { command, decision };
}

describe("the edge and the cloud decide alike", () => {
  it("a tap and the app's command for the same use are both allowed or both refused", () => {
    fc.assert(
      fc.property(situationArb, (s) => {
        const tap = decideTap(tapOf(s));
        const { command, decision } = commandOf(s);
        expect(tap.granted).toBe(decision.accepted);
        if (tap.granted) expect(tap.action).toBe(command);
      }),
      { numRuns: 500 },
    );
  });

  it("covers every situation: allowed and refused, on doors and lockers, by holder, member and operator", () => {
    const seen = new Set<string>();
    fc.assert(
      fc.property(situationArb, (s) => {
        const tap = decideTap(tapOf(s));
        seen.add(`${s.family} ${tap.granted ? tap.reason : "refused"}`);
      }),
      { numRuns: 500 },
    );
    for (const outcome of [
      "locking retrieved",
      "locking master_key",
      "locking parked",
      "locking refused",
      "door whitelisted",
      "door master_key",
      "door refused",
    ])
      expect(seen).toContain(outcome);
  });
});
