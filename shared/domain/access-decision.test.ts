import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { Grant } from "../wire/messages.ts";
import { decideTap, grantFailure, type TapContext, type TapDecision } from "./access-decision.ts";
import { DEVICE_TYPES, familyOf } from "./device-types.ts";

const NOW = new Date("2026-03-02T09:00:00.000Z");
const iso = (ms: number) => new Date(NOW.getTime() + ms).toISOString();
const HOUR = 3_600_000;
const LOCATION = "10000000-0000-4000-8000-000000000001";
const OTHER_LOCATION = "10000000-0000-4000-8000-000000000002";
const DEVICE = "20000000-0000-4000-8000-000000000001";
const OTHER_DEVICE = "20000000-0000-4000-8000-000000000002";
const WL_A = "30000000-0000-4000-8000-00000000000a";
const WL_B = "30000000-0000-4000-8000-00000000000b";
const CARD = "04a1b2c3d4";
const OTHER_CARD = "0badcafe";

/** An ACTIVE, unexpiring, plain grant of CARD targeting the location, unless overridden. */
const aGrant = (over: Partial<Grant> = {}): Grant => ({
  card_id: CARD,
  whitelist_id: WL_A,
  status: "ACTIVE",
  expires_at: null,
  is_master_key: false,
  location_ids: [LOCATION],
  device_ids: [],
  ...over,
});

/** A free locker at a location with rfid_parking, tapped by CARD holding one plain grant, unless overridden. */
const aTap = (over: Partial<TapContext> = {}): TapContext => ({
  card: CARD,
  now: NOW,
  device: { device_id: DEVICE, type: "LOCKER", location_id: LOCATION },
  rfidParking: true,
  grants: [aGrant()],
  occupancy: { locked: false, parkedBy: null },
  booking: null,
  ...over,
});
const aDoorTap = (over: Partial<TapContext> = {}) =>
  aTap({ device: { device_id: DEVICE, type: "BIKE_HOUSE_DOOR", location_id: LOCATION }, ...over });

const refused = (reason: string, whitelist_id: string | null = null): TapDecision => ({
  granted: false,
  action: "none",
  reason: reason as TapDecision["reason"],
  whitelist_id,
});

describe("decideTap: devices", () => {
  it.each([
    ["no device", aTap({ device: null })],
    ["a GUARD", aTap({ device: { device_id: DEVICE, type: "GUARD", location_id: LOCATION } })],
    ["a rental", aTap({ device: { device_id: DEVICE, type: "BIKE_RENT", location_id: LOCATION } })],
    ["an unknown type", aTap({ device: { device_id: DEVICE, type: "TOASTER", location_id: LOCATION } })],
  ])("refuses %s with no_device", (_what, ctx) => {
    expect(decideTap(ctx)).toEqual(refused("no_device"));
  });
});

describe("decideTap: grants", () => {
  it("refuses a card with no grants as unknown_card", () => {
    expect(decideTap(aDoorTap({ grants: [] }))).toEqual(refused("unknown_card"));
  });

  it("counts a grant targeting the device itself, or the device's location", () => {
    const byDevice = aGrant({ location_ids: [], device_ids: [DEVICE] });
    expect(decideTap(aDoorTap({ grants: [byDevice] })).granted).toBe(true);
    expect(decideTap(aDoorTap({ grants: [aGrant()] })).granted).toBe(true);
  });

  it("refuses a grant for another device or location as not_targeted", () => {
    const elsewhere = aGrant({ location_ids: [OTHER_LOCATION], device_ids: [OTHER_DEVICE] });
    expect(decideTap(aDoorTap({ grants: [elsewhere] }))).toEqual(refused("not_targeted"));
  });

  it("does not take a location target for a device whose location is unknown", () => {
    const ctx = aDoorTap({ device: { device_id: DEVICE, type: "DOOR", location_id: null } });
    expect(decideTap(ctx)).toEqual(refused("not_targeted"));
  });

  it("refuses an INACTIVE grant as inactive, naming its whitelist", () => {
    expect(decideTap(aDoorTap({ grants: [aGrant({ status: "INACTIVE" })] }))).toEqual(
      refused("inactive", WL_A),
    );
  });

  it("refuses from expires_at on, even a master key; a moment before it still opens", () => {
    const g = aGrant({ expires_at: NOW.toISOString() });
    expect(decideTap(aDoorTap({ grants: [g] }))).toEqual(refused("expired", WL_A));
    expect(decideTap(aDoorTap({ grants: [{ ...g, is_master_key: true }] })).reason).toBe("expired");
    expect(decideTap(aDoorTap({ grants: [g], now: new Date(NOW.getTime() - 1) })).granted).toBe(true);
  });

  it("reads expires_at with any offset", () => {
    const g = aGrant({ expires_at: "2026-03-02T10:00:01+01:00" }); // 09:00:01Z
    expect(decideTap(aDoorTap({ grants: [g] })).granted).toBe(true);
    expect(decideTap(aDoorTap({ grants: [g], now: new Date(NOW.getTime() + 1_000) })).reason).toBe("expired");
  });

  it("names the closest miss: expired before inactive before not_targeted", () => {
    const elsewhere = aGrant({ whitelist_id: WL_B, location_ids: [OTHER_LOCATION] });
    const inactive = aGrant({ status: "INACTIVE" });
    const expired = aGrant({ whitelist_id: WL_B, expires_at: iso(-1) });
    expect(decideTap(aDoorTap({ grants: [elsewhere, inactive] }))).toEqual(refused("inactive", WL_A));
    expect(decideTap(aDoorTap({ grants: [inactive, expired, elsewhere] }))).toEqual(refused("expired", WL_B));
  });

  it("opens when any one grant is valid, whatever the others say", () => {
    const grants = [aGrant({ status: "INACTIVE" }), aGrant({ whitelist_id: WL_B, expires_at: iso(HOUR) })];
    expect(decideTap(aDoorTap({ grants }))).toMatchObject({ granted: true, whitelist_id: WL_B });
  });
});

describe("decideTap: doors", () => {
  it.each(["BIKE_HOUSE_DOOR", "DOOR"])("a whitelisted card unlocks a %s", (type) => {
    const ctx = aTap({ device: { device_id: DEVICE, type, location_id: LOCATION } });
    expect(decideTap(ctx)).toEqual({
      granted: true,
      action: "unlock",
      reason: "whitelisted",
      whitelist_id: WL_A,
    });
  });

  it("says master_key when only a master key holds, whitelisted when a plain grant does too", () => {
    const master = aGrant({ whitelist_id: WL_B, is_master_key: true });
    expect(decideTap(aDoorTap({ grants: [master] }))).toMatchObject({
      reason: "master_key",
      whitelist_id: WL_B,
    });
    expect(decideTap(aDoorTap({ grants: [master, aGrant()] }))).toMatchObject({
      reason: "whitelisted",
      whitelist_id: WL_A,
    });
  });

  it("ignores latch, parking and bookings", () => {
    const ctx = aDoorTap({
      occupancy: { locked: true, parkedBy: OTHER_CARD },
      booking: { holder: "someone" },
      rfidParking: false,
    });
    expect(decideTap(ctx)).toMatchObject({ granted: true, action: "unlock" });
  });
});

describe("decideTap: lockers and docks", () => {
  const master = aGrant({ whitelist_id: WL_B, is_master_key: true });

  it.each(["LOCKER", "BIKE_DOCK", "SCOOTER_DOCK", "DOCK", "DOCK_SESSIONLESS"])(
    "a free %s at an rfid_parking location locks for the card (parked)",
    (type) => {
      const ctx = aTap({ device: { device_id: DEVICE, type, location_id: LOCATION } });
      expect(decideTap(ctx)).toEqual({ granted: true, action: "lock", reason: "parked", whitelist_id: WL_A });
    },
  );

  it("refuses to park where the location has no rfid_parking", () => {
    expect(decideTap(aTap({ rfidParking: false }))).toEqual(refused("no_rfid_parking"));
  });

  it("the card that parked it unlocks it (retrieved), even after its grants are gone", () => {
    const occupancy = { locked: true, parkedBy: CARD };
    const want = { granted: true, action: "unlock", reason: "retrieved", whitelist_id: null };
    expect(decideTap(aTap({ occupancy }))).toEqual(want);
    expect(decideTap(aTap({ occupancy, grants: [] }))).toEqual(want);
    expect(decideTap(aTap({ occupancy, grants: [aGrant({ expires_at: iso(-1) })] }))).toEqual(want);
    // Not yet read since the start: the gateway still remembers who parked it.
    expect(decideTap(aTap({ occupancy: { locked: null, parkedBy: CARD } }))).toEqual(want);
  });

  it("refuses another card on an occupied device as occupied", () => {
    const occupancy = { locked: true, parkedBy: OTHER_CARD };
    expect(decideTap(aTap({ occupancy }))).toEqual(refused("occupied"));
    expect(decideTap(aTap({ occupancy: { locked: true, parkedBy: null } }))).toEqual(refused("occupied"));
  });

  it("a master key unlocks an occupied device, whoever parked it", () => {
    for (const parkedBy of [OTHER_CARD, null])
      expect(decideTap(aTap({ grants: [master], occupancy: { locked: true, parkedBy } }))).toEqual({
        granted: true,
        action: "unlock",
        reason: "master_key",
        whitelist_id: WL_B,
      });
  });

  it("a master key of another location does not", () => {
    const far = { ...master, location_ids: [OTHER_LOCATION] };
    expect(decideTap(aTap({ grants: [far], occupancy: { locked: true, parkedBy: null } }))).toEqual(
      refused("not_targeted"),
    );
  });

  it("does not lock a device whose latch is unknown for anyone (unknown_state); a master key unlocks it", () => {
    const occupancy = { locked: null, parkedBy: null };
    expect(decideTap(aTap({ occupancy }))).toEqual(refused("unknown_state"));
    expect(decideTap(aTap({ occupancy, grants: [master] }))).toMatchObject({
      action: "unlock",
      reason: "master_key",
    });
  });

  it("a running booking refuses a free device (booked) unless the card is a master key", () => {
    const booking = { holder: "app-user-1" };
    expect(decideTap(aTap({ booking }))).toEqual(refused("booked"));
    expect(decideTap(aTap({ booking, grants: [master] }))).toMatchObject({ granted: true, action: "lock" });
  });

  it("a free device sensed free again ignores a stale parked card: the card parks anew", () => {
    expect(decideTap(aTap({ occupancy: { locked: false, parkedBy: CARD } }))).toMatchObject({
      action: "lock",
      reason: "parked",
    });
  });

  it("grant checks come before occupancy: an unknown card on an occupied locker is unknown_card", () => {
    expect(decideTap(aTap({ grants: [], occupancy: { locked: true, parkedBy: OTHER_CARD } }))).toEqual(
      refused("unknown_card"),
    );
  });
});

describe("grantFailure", () => {
  const device = { device_id: DEVICE, type: "LOCKER", location_id: LOCATION };
  it("checks target, then status, then expiry", () => {
    expect(grantFailure(aGrant(), device, NOW)).toBeNull();
    expect(grantFailure(aGrant({ location_ids: [], status: "INACTIVE" }), device, NOW)).toBe("not_targeted");
    expect(grantFailure(aGrant({ status: "INACTIVE", expires_at: iso(-1) }), device, NOW)).toBe("inactive");
    expect(grantFailure(aGrant({ expires_at: iso(-1) }), device, NOW)).toBe("expired");
  });
});

// ── Properties ───────────────────────────────────────────────────────────────────────────────────────

const arbGrant: fc.Arbitrary<Grant> = fc.record({
  card_id: fc.constant(CARD),
  whitelist_id: fc.constantFrom(WL_A, WL_B, "30000000-0000-4000-8000-00000000000c"),
  status: fc.constantFrom("ACTIVE" as const, "INACTIVE" as const),
  expires_at: fc.option(
    fc.integer({ min: -2 * HOUR, max: 2 * HOUR }).map((ms) => iso(ms)),
    { nil: null },
  ),
  is_master_key: fc.boolean(),
  location_ids: fc.subarray([LOCATION, OTHER_LOCATION]),
  device_ids: fc.subarray([DEVICE, OTHER_DEVICE]),
});

const arbCtx: fc.Arbitrary<TapContext> = fc.record({
  card: fc.constant(CARD),
  now: fc.integer({ min: -3 * HOUR, max: 3 * HOUR }).map((ms) => new Date(NOW.getTime() + ms)),
  device: fc.option(
    fc.record({
      device_id: fc.constant(DEVICE),
      type: fc.constantFrom(...DEVICE_TYPES),
      location_id: fc.option(fc.constantFrom(LOCATION, OTHER_LOCATION), { nil: null }),
    }),
    { nil: null },
  ),
  rfidParking: fc.boolean(),
  grants: fc.array(arbGrant, { maxLength: 4 }),
  occupancy: fc.record({
    locked: fc.option(fc.boolean(), { nil: null }),
    parkedBy: fc.option(fc.constantFrom(CARD, OTHER_CARD), { nil: null }),
  }),
  booking: fc.option(fc.record({ holder: fc.constantFrom("u1", "u2") }), { nil: null }),
});

const validGrants = (ctx: TapContext) =>
  ctx.device ? ctx.grants.filter((g) => ctx.device && grantFailure(g, ctx.device, ctx.now) === null) : [];

describe("decideTap: properties", () => {
  it("grants exactly when it acts, and a refusal never moves anything", () => {
    fc.assert(
      fc.property(arbCtx, (ctx) => {
        const d = decideTap(ctx);
        expect(d.granted).toBe(d.action !== "none");
      }),
    );
  });

  it("every grant but a retrieval rests on a valid grant, whose whitelist it names", () => {
    fc.assert(
      fc.property(arbCtx, (ctx) => {
        const d = decideTap(ctx);
        if (!d.granted || d.reason === "retrieved") return;
        const valid = validGrants(ctx);
        expect(valid.map((g) => g.whitelist_id)).toContain(d.whitelist_id);
        if (d.reason === "master_key") expect(valid.some((g) => g.is_master_key)).toBe(true);
      }),
    );
  });

  it("only doors and locking devices ever move; doors only unlock", () => {
    fc.assert(
      fc.property(arbCtx, (ctx) => {
        const d = decideTap(ctx);
        const family = ctx.device ? familyOf(ctx.device.type as (typeof DEVICE_TYPES)[number]) : null;
        if (family !== "door" && family !== "locking") expect(d).toEqual(refused("no_device"));
        if (family === "door") expect(d.action).not.toBe("lock");
      }),
    );
  });

  it("locks only a device sensed free, with rfid_parking, not booked for anyone but a master key", () => {
    fc.assert(
      fc.property(arbCtx, (ctx) => {
        const d = decideTap(ctx);
        if (d.action !== "lock") return;
        expect(ctx.occupancy.locked).toBe(false);
        expect(ctx.rfidParking).toBe(true);
        if (ctx.booking) expect(validGrants(ctx).some((g) => g.is_master_key)).toBe(true);
      }),
    );
  });

  it("unlocks a locking device only when it may be occupied, by its parker or a master key", () => {
    fc.assert(
      fc.property(arbCtx, (ctx) => {
        const d = decideTap(ctx);
        if (d.action !== "unlock" || !ctx.device || familyOf(ctx.device.type as never) !== "locking") return;
        expect(ctx.occupancy.locked).not.toBe(false);
        if (d.reason === "retrieved") expect(ctx.occupancy.parkedBy).toBe(ctx.card);
        else expect(d.reason).toBe("master_key");
      }),
    );
  });

  it("time only takes access away: a tap refused now is refused later too (retrievals aside)", () => {
    fc.assert(
      fc.property(arbCtx, fc.integer({ min: 1, max: 4 * HOUR }), (ctx, later) => {
        const before = decideTap(ctx);
        const after = decideTap({ ...ctx, now: new Date(ctx.now.getTime() + later) });
        if (after.granted) expect(before.granted).toBe(true);
      }),
    );
  });

  it("a grant that is not valid never changes the decision", () => {
    fc.assert(
      fc.property(arbCtx, arbGrant, (ctx, extra) => {
        fc.pre(ctx.grants.length > 0 && ctx.device !== null);
        fc.pre(ctx.device !== null && grantFailure(extra, ctx.device, ctx.now) !== null);
        const d = decideTap(ctx);
        const with_ = decideTap({ ...ctx, grants: [...ctx.grants, extra] });
        if (d.granted) expect(with_).toEqual(d);
        else expect(with_.granted).toBe(false);
      }),
    );
  });

  it("is a function of its input: the same context gives the same decision", () => {
    fc.assert(
      fc.property(arbCtx, (ctx) => {
        expect(decideTap(structuredClone(ctx))).toEqual(decideTap(ctx));
      }),
    );
  });
});
