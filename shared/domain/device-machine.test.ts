import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  DEVICE_STATE_VALUES,
  type DeviceInput,
  type DeviceState,
  type DeviceStateValue,
  type DeviceTimeouts,
  isInterim,
  readyState,
  type StableState,
  type Transition,
  transitionDevice,
} from "./device-machine.ts";
import { COMMAND_NAMES, type CommandName, type DeviceFamily } from "./device-types.ts";

const HOUR = 60 * 60 * 1000;
const T: DeviceTimeouts = { deliveryMs: 10_000, hardwareMs: 20_000, bookingMs: HOUR, doorReleaseMs: 5_000 };
const T0 = Date.parse("2024-05-01T10:00:00.000Z");
const at = (ms: number) => new Date(T0 + ms);
const iso = (ms: number) => at(ms).toISOString();
const FAMILIES: readonly DeviceFamily[] = ["locking", "door", "guard", "rental"];

/** A device state; `ms` is when it changed, relative to T0. */
function state(
  value: DeviceStateValue,
  timeout_at: string | null = null,
  restore: StableState | null = null,
  ms = 0,
) {
  return { value, changed_at: iso(ms), timeout_at, restore } satisfies DeviceState;
}
const stable = (value: DeviceStateValue, timeout_at: string | null = null): StableState => ({
  value,
  timeout_at,
});
const cmd = (name: CommandName): DeviceInput => ({ kind: "command", name });
const confirmed = (name: CommandName, bookingUntil?: string): DeviceInput => ({
  kind: "confirmed",
  name,
  bookingUntil,
});
const EXPIRED: DeviceInput = { kind: "expired" };
const FAILED: DeviceInput = { kind: "failed" };
const L = "locking";

/** Applies an input that must be accepted. */
function apply(family: DeviceFamily, s: DeviceState, input: DeviceInput, ms: number): Transition {
  const r = transitionDevice(family, s, input, at(ms), T);
  if (r.refused) throw new Error(`unexpected refusal: ${r.message}`);
  return r;
}
const next = (family: DeviceFamily, s: DeviceState, input: DeviceInput, ms: number) =>
  apply(family, s, input, ms).state;

describe("device state: bookings", () => {
  const booking = (from = state("UNLOCKED")) => next(L, from, cmd("book"), 1_000);

  it("a book holds an available device as ALLOCATED until the delivery deadline", () => {
    expect(booking()).toEqual(state("ALLOCATED", iso(1_000 + T.deliveryMs), stable("UNLOCKED"), 1_000));
  });

  it("the gateway taking a book keeps it ALLOCATED with the confirmation window", () => {
    expect(next(L, booking(), { kind: "received", name: "book" }, 2_000)).toEqual(
      state("ALLOCATED", iso(2_000 + T.hardwareMs), stable("UNLOCKED"), 2_000),
    );
  });

  it("once the gateway recorded it the device is BOOKED until the booking's end", () => {
    expect(next(L, booking(), confirmed("book", iso(90_000)), 3_000)).toEqual(
      state("BOOKED", iso(90_000), null, 3_000),
    );
  });

  it("a confirmed book without an end is BOOKED for one hour by default", () => {
    expect(next(L, booking(), confirmed("book"), 3_000).timeout_at).toBe(iso(3_000 + HOUR));
  });

  it("a booking end written with a UTC offset is kept as the same instant", () => {
    expect(next(L, booking(), confirmed("book", "2024-05-01T13:30:00+02:00"), 3_000).timeout_at).toBe(
      "2024-05-01T11:30:00.000Z",
    );
  });

  it("a booking that ended before the gateway confirmed it leaves the device UNLOCKED", () => {
    expect(next(L, booking(), confirmed("book", iso(2_000)), 3_000)).toEqual(
      state("UNLOCKED", null, null, 3_000),
    );
  });

  it("a book that fails or misses its deadline returns the device to UNLOCKED", () => {
    expect(next(L, booking(), FAILED, 2_000)).toEqual(state("UNLOCKED", null, null, 2_000));
    expect(next(L, booking(), EXPIRED, 1_000 + T.deliveryMs)).toEqual(
      state("UNLOCKED", null, null, 1_000 + T.deliveryMs),
    );
  });

  it("a booking returns the device to UNLOCKED when it expires", () => {
    const booked = state("BOOKED", iso(60_000));
    expect(apply(L, booked, EXPIRED, 59_999)).toEqual({ refused: false, changed: false, state: booked });
    expect(next(L, booked, EXPIRED, 60_000)).toEqual(state("UNLOCKED", null, null, 60_000));
  });

  it.each(["cancel-booking", "force-cancel-booking"] as const)(
    "%s is accepted without a change; the booking ends when the gateway confirms",
    (name) => {
      const booked = state("BOOKED", iso(HOUR));
      expect(apply(L, booked, cmd(name), 5)).toEqual({ refused: false, changed: false, state: booked });
      expect(next(L, booked, confirmed(name), 6)).toEqual(state("UNLOCKED", null, null, 6));
      // A failed cancel keeps the booking.
      expect(apply(L, booked, FAILED, 7).changed).toBe(false);
    },
  );

  it("force-cancel-booking bypasses the state checks: without a booking it changes nothing", () => {
    for (const s of [state("UNLOCKED"), state("LOCKED"), state("UNLOCKING", iso(HOUR), stable("LOCKED"))]) {
      for (const input of [cmd("force-cancel-booking"), confirmed("force-cancel-booking")]) {
        expect(apply(L, s, input, 5)).toEqual({ refused: false, changed: false, state: s });
      }
    }
  });

  it("a booking ended under a lock in flight drops the booking the lock would return to", () => {
    const allocated = next(L, state("BOOKED", iso(HOUR)), cmd("lock"), 0);
    const r = apply(L, allocated, confirmed("force-cancel-booking"), 5);
    expect(r.state).toEqual({ ...allocated, restore: stable("UNLOCKED") });
    expect(next(L, r.state, FAILED, 6)).toEqual(state("UNLOCKED", null, null, 6));
  });
});

describe("device state: lock and unlock", () => {
  const allocated = (from = state("UNLOCKED")) => next(L, from, cmd("lock"), 0);

  it("a lock holds an UNLOCKED device as ALLOCATED until the delivery deadline", () => {
    expect(next(L, state("UNLOCKED"), cmd("lock"), 1_000)).toEqual(
      state("ALLOCATED", iso(1_000 + T.deliveryMs), stable("UNLOCKED"), 1_000),
    );
  });

  it("a lock on a BOOKED device holds it as ALLOCATED and remembers the booking and its expiry", () => {
    expect(allocated(state("BOOKED", iso(HOUR)))).toEqual(
      state("ALLOCATED", iso(T.deliveryMs), stable("BOOKED", iso(HOUR))),
    );
  });

  it("the gateway taking a lock moves ALLOCATED to LOCKING with the hardware window", () => {
    expect(next(L, allocated(), { kind: "received", name: "lock" }, 2_000)).toEqual(
      state("LOCKING", iso(2_000 + T.hardwareMs), stable("UNLOCKED"), 2_000),
    );
  });

  it("hardware confirmation makes a LOCKING or ALLOCATED device LOCKED with no timeout", () => {
    const locking = next(L, allocated(), { kind: "received", name: "lock" }, 1_000);
    for (const s of [allocated(), locking]) {
      expect(next(L, s, { kind: "confirmed", name: "lock" }, 3_000)).toEqual(
        state("LOCKED", null, null, 3_000),
      );
    }
  });

  it("an unlock goes through UNLOCKING to UNLOCKED, with no timeout on a locker", () => {
    const unlocking = next(L, state("LOCKED"), cmd("unlock"), 1_000);
    // UNLOCKING carries the hardware confirmation window, which ends at the latest after delivery.
    expect(unlocking).toEqual(
      state("UNLOCKING", iso(1_000 + T.deliveryMs + T.hardwareMs), stable("LOCKED"), 1_000),
    );
    const received = next(L, unlocking, { kind: "received", name: "unlock" }, 2_000);
    expect(received).toEqual(state("UNLOCKING", iso(2_000 + T.hardwareMs), stable("LOCKED"), 2_000));
    expect(next(L, received, { kind: "confirmed", name: "unlock" }, 3_000)).toEqual(
      state("UNLOCKED", null, null, 3_000),
    );
  });

  it("a failed lock returns a booked device to BOOKED with its old booking expiry", () => {
    expect(next(L, allocated(state("BOOKED", iso(HOUR))), FAILED, 4_000)).toEqual(
      state("BOOKED", iso(HOUR), null, 4_000),
    );
  });

  it("a failed unlock returns the device to LOCKED", () => {
    const unlocking = next(L, state("LOCKED"), cmd("unlock"), 0);
    expect(next(L, unlocking, FAILED, 4_000)).toEqual(state("LOCKED", null, null, 4_000));
  });

  it("a lock whose deadline passes returns the device to its booking", () => {
    const s = allocated(state("BOOKED", iso(HOUR)));
    expect(apply(L, s, EXPIRED, T.deliveryMs - 1).changed).toBe(false);
    expect(next(L, s, EXPIRED, T.deliveryMs)).toEqual(state("BOOKED", iso(HOUR), null, T.deliveryMs));
  });

  it("a lock that times out after the booking ended leaves the device UNLOCKED, not BOOKED", () => {
    const s = allocated(state("BOOKED", iso(5_000)));
    expect(next(L, s, EXPIRED, T.deliveryMs)).toEqual(state("UNLOCKED", null, null, T.deliveryMs));
  });

  // The booking end is compared as an instant, not as text: an RFC 3339 end written with a UTC offset
  // (11:30Z here, still 90 minutes away) compared as a string would read as over and lose the booking.
  it("a lock that times out during a booking whose end has a UTC offset returns the device to BOOKED", () => {
    const s = allocated(state("BOOKED", "2024-05-01T09:30:00-02:00"));
    expect(next(L, s, EXPIRED, T.deliveryMs).value).toBe("BOOKED");
  });
});

describe("device state: doors use inverted logic", () => {
  it("an unlock releases a LOCKED door as UNLOCKED for the release window", () => {
    expect(readyState("door")).toBe("LOCKED");
    const unlocking = next("door", state("LOCKED"), cmd("unlock"), 0);
    expect(next("door", unlocking, { kind: "confirmed", name: "unlock" }, 3_000)).toEqual(
      state("UNLOCKED", iso(3_000 + T.doorReleaseMs), null, 3_000),
    );
  });

  it("a released door re-locks when its release window passes", () => {
    const released = state("UNLOCKED", iso(5_000));
    expect(apply("door", released, EXPIRED, 4_999).changed).toBe(false);
    expect(next("door", released, EXPIRED, 5_000)).toEqual(state("LOCKED", null, null, 5_000));
  });

  it("a released door can be unlocked again, and a failure keeps its release window", () => {
    const unlocking = next("door", state("UNLOCKED", iso(5_000)), cmd("unlock"), 1_000);
    expect(unlocking.restore).toEqual(stable("UNLOCKED", iso(5_000)));
    expect(next("door", unlocking, FAILED, 2_000)).toEqual(state("UNLOCKED", iso(5_000), null, 2_000));
  });

  it("a released door whose lock still reads unlocked (held open) waits for the sensors", () => {
    const released = state("UNLOCKED", iso(5_000), null, 1_000);
    const held = next("door", released, { kind: "expired", lockState: "UNLOCKED" }, 5_000);
    expect(held).toEqual(state("UNLOCKED", null, null, 1_000));
    expect(next("door", held, { kind: "sensed", lockState: "LOCKED" }, 9_000)).toEqual(
      state("LOCKED", null, null, 9_000),
    );
    expect(next("door", released, { kind: "expired", lockState: "LOCKED" }, 5_000).value).toBe("LOCKED");
  });

  it("a door a tap released is UNLOCKED until its release window ends, as after an unlock command", () => {
    const tapped: DeviceInput = { kind: "sensed", lockState: "UNLOCKED", doorReleased: true };
    const released = next("door", state("LOCKED"), tapped, 3_000);
    expect(released).toEqual(state("UNLOCKED", iso(3_000 + T.doorReleaseMs), null, 3_000));
    // Another tap while it is released starts the window again; the state itself did not change.
    expect(next("door", released, tapped, 6_000)).toEqual(
      state("UNLOCKED", iso(6_000 + T.doorReleaseMs), null, 3_000),
    );
    expect(apply("door", released, tapped, 3_000).changed).toBe(false);
    // A door held open past its window (no re-lock predicted) gets a window again from a tap.
    expect(next("door", state("UNLOCKED", null, null, 1_000), tapped, 9_000)).toEqual(
      state("UNLOCKED", iso(9_000 + T.doorReleaseMs), null, 1_000),
    );
    // It re-locks when the window passes, unless its lock still reads released.
    expect(next("door", released, { kind: "expired", lockState: "LOCKED" }, 8_000).value).toBe("LOCKED");
    // A command in flight settles the state; a locker is not a door.
    const unlocking = state("UNLOCKING", iso(20_000), stable("LOCKED"));
    expect(apply("door", unlocking, tapped, 7).changed).toBe(false);
    expect(next(L, state("LOCKED"), tapped, 7)).toEqual(state("UNLOCKED", null, null, 7));
  });

  it("a locker or dock is ready when UNLOCKED and never re-locks on its own", () => {
    expect(readyState(L)).toBe("UNLOCKED");
    expect(apply(L, state("UNLOCKED"), EXPIRED, 10 * HOUR).changed).toBe(false);
  });
});

describe("device state: the sensors are the truth", () => {
  const sensed = (lockState: "LOCKED" | "UNLOCKED"): DeviceInput => ({ kind: "sensed", lockState });

  it("a locking device found locked is LOCKED, even if it was free or booked", () => {
    for (const s of [state("UNLOCKED"), state("BOOKED", iso(HOUR))]) {
      expect(next(L, s, sensed("LOCKED"), 7)).toEqual(state("LOCKED", null, null, 7));
    }
  });

  it("a locking device found unlocked is UNLOCKED (available)", () => {
    expect(next(L, state("LOCKED"), sensed("UNLOCKED"), 7)).toEqual(state("UNLOCKED", null, null, 7));
  });

  it("a reading that agrees changes nothing", () => {
    for (const [s, lock] of [
      [state("LOCKED"), "LOCKED"],
      [state("UNLOCKED"), "UNLOCKED"],
      [state("BOOKED", iso(HOUR)), "UNLOCKED"],
    ] as const) {
      expect(apply(L, s, sensed(lock), 7)).toEqual({ refused: false, changed: false, state: s });
    }
  });

  it("during a command in flight the sensors do not move the state: the outcome settles it", () => {
    for (const s of [
      state("ALLOCATED", iso(10_000), stable("UNLOCKED")),
      state("LOCKING", iso(20_000), stable("UNLOCKED")),
      state("UNLOCKING", iso(20_000), stable("LOCKED")),
    ]) {
      for (const lock of ["LOCKED", "UNLOCKED"] as const)
        expect(apply(L, s, sensed(lock), 7).changed).toBe(false);
    }
  });

  it("a door follows its lock, and a door found released by other means does not predict its re-lock", () => {
    expect(next("door", state("LOCKED"), sensed("UNLOCKED"), 7)).toEqual(state("UNLOCKED", null, null, 7));
    expect(next("door", state("UNLOCKED", iso(HOUR)), sensed("LOCKED"), 8)).toEqual(
      state("LOCKED", null, null, 8),
    );
  });

  it("a GUARD's state means nothing and does not follow sensors", () => {
    expect(apply("guard", state("UNLOCKED"), sensed("LOCKED"), 7).changed).toBe(false);
  });
});

describe("device state: force commands and refusals", () => {
  const SAMPLES: Record<DeviceStateValue, DeviceState> = {
    UNLOCKED: state("UNLOCKED"),
    BOOKED: state("BOOKED", iso(HOUR)),
    LOCKED: state("LOCKED"),
    ALLOCATED: state("ALLOCATED", iso(10_000), stable("BOOKED", iso(HOUR))),
    LOCKING: state("LOCKING", iso(20_000), stable("UNLOCKED")),
    UNLOCKING: state("UNLOCKING", iso(20_000), stable("LOCKED")),
  };
  const cases = DEVICE_STATE_VALUES.flatMap((v) =>
    (["force-lock", "force-unlock"] as const).map((name) => [name, v] as const),
  );

  it.each(cases)("%s bypasses the state check on a %s device", (name, value) => {
    const s = SAMPLES[value];
    const to = name === "force-lock" ? "LOCKING" : "UNLOCKING";
    const restore = s.restore ?? stable(s.value, s.timeout_at);
    expect(next(L, s, cmd(name), 1_000)).toEqual(
      state(to, iso(1_000 + T.deliveryMs + T.hardwareMs), restore, 1_000),
    );
  });

  // "family:state:command" cases that must be refused.
  const refused = (
    "locking:LOCKED:lock locking:ALLOCATED:lock locking:LOCKING:lock locking:UNLOCKING:lock " +
    "locking:UNLOCKED:unlock locking:BOOKED:unlock locking:BOOKED:book locking:LOCKED:book " +
    "locking:UNLOCKED:cancel-booking door:UNLOCKING:unlock door:LOCKING:unlock"
  )
    .split(" ")
    .map((c) => c.split(":") as [DeviceFamily, DeviceStateValue, CommandName]);
  it.each(refused)("a %s device refuses while %s the command %s", (family, value, name) => {
    const s = SAMPLES[value];
    const before = structuredClone(s);
    expect(transitionDevice(family, s, cmd(name), at(1_000), T)).toEqual({
      refused: true,
      code: "COMMAND_NOT_ALLOWED_IN_STATE",
      message: `Command ${name} is not allowed while the device is ${value}`,
    });
    expect(s).toEqual(before);
  });

  it("sync-device, take-photo and stray hardware reports leave a stable state untouched", () => {
    const stray: DeviceInput[] = [cmd("sync-device"), cmd("take-photo"), FAILED];
    stray.push({ kind: "received", name: "lock" }, { kind: "confirmed", name: "unlock" });
    for (const s of [SAMPLES.UNLOCKED, SAMPLES.BOOKED, SAMPLES.LOCKED]) {
      for (const input of stray) {
        expect(apply(L, s, input, 1_000)).toEqual({ refused: false, changed: false, state: s });
      }
    }
  });
});

describe("device state properties", () => {
  const nameArb = fc.constantFrom(...COMMAND_NAMES);
  const inputArb: fc.Arbitrary<DeviceInput> = fc.oneof(
    { arbitrary: nameArb.map((name) => cmd(name)), weight: 4 },
    { arbitrary: nameArb.map((name): DeviceInput => ({ kind: "received", name })), weight: 2 },
    { arbitrary: nameArb.map((name): DeviceInput => ({ kind: "confirmed", name })), weight: 2 },
    { arbitrary: fc.constant(FAILED), weight: 1 },
    { arbitrary: fc.constant(EXPIRED), weight: 3 },
    {
      arbitrary: fc
        .constantFrom("LOCKED" as const, "UNLOCKED" as const)
        .chain((lockState) =>
          fc.constantFrom<DeviceInput>({ kind: "sensed", lockState }, { kind: "expired", lockState }),
        ),
      weight: 2,
    },
  );
  const stepArb = fc.record({
    input: inputArb,
    dt: fc.oneof(fc.integer({ min: 0, max: 25_000 }), fc.integer({ min: 0, max: 2 * HOUR })),
    bookAfterMs: fc.option(fc.integer({ min: 1, max: 2 * HOUR })),
  });
  const runArb = fc.record({
    family: fc.constantFrom(...FAMILIES),
    steps: fc.array(stepArb, { maxLength: 60 }),
  });

  type Step = { input: DeviceInput; dt: number; bookAfterMs: number | null };
  type Result = ReturnType<typeof transitionDevice>;
  type Visit = (v: {
    family: DeviceFamily;
    prev: DeviceState;
    r: Result;
    now: number;
    snapshot: DeviceState;
  }) => void;
  /** Walks a device from its ready state through the steps, with `now` only moving forward. */
  function walk({ family, steps }: { family: DeviceFamily; steps: Step[] }, visit: Visit) {
    let s: DeviceState = state(readyState(family));
    let now = 0;
    for (const { input, dt, bookAfterMs } of steps) {
      now += dt;
      const snapshot = structuredClone(s);
      const booked = input.kind === "confirmed" && input.name === "book" && bookAfterMs !== null;
      const r = transitionDevice(
        family,
        s,
        booked ? confirmed("book", iso(now + bookAfterMs)) : input,
        at(now),
        T,
      );
      visit({ family, prev: s, r, now, snapshot });
      if (!r.refused) s = r.state;
    }
  }
  const check = (visit: Visit) => fc.assert(fc.property(runArb, (run) => walk(run, visit)));

  it("no input sequence takes a device outside DEVICE_STATE_VALUES", () => {
    check(({ r }) => {
      if (!r.refused) expect(DEVICE_STATE_VALUES).toContain(r.state.value);
    });
  });

  it("a stable state (UNLOCKED, BOOKED, LOCKED) never carries a restore state", () => {
    check(({ r }) => {
      if (!r.refused && !isInterim(r.state.value)) expect(r.state.restore).toBeNull();
    });
  });

  it("an interim state always has a deadline and a stable state to go back to", () => {
    check(({ r }) => {
      if (r.refused || !isInterim(r.state.value)) return;
      expect(r.state.timeout_at).not.toBeNull();
      expect(r.state.restore).not.toBeNull();
      expect(isInterim(r.state.restore!.value)).toBe(false);
    });
  });

  it("LOCKED, and UNLOCKED on anything but a door, never time out", () => {
    check(({ family, r }) => {
      if (r.refused) return;
      if (r.state.value === "LOCKED" || (r.state.value === "UNLOCKED" && family !== "door")) {
        expect(r.state.timeout_at).toBeNull();
      }
    });
  });

  it("refusals and no-op inputs leave the state exactly as it was", () => {
    check(({ prev, r, snapshot }) => {
      if (r.refused) expect(r.code).toBe("COMMAND_NOT_ALLOWED_IN_STATE");
      else if (!r.changed) expect(r.state).toBe(prev);
      expect(prev).toEqual(snapshot);
    });
  });

  it("changed_at never goes backwards and is stamped with now whenever the value changes", () => {
    check(({ prev, r, now }) => {
      if (r.refused || !r.changed) return;
      if (r.state.value !== prev.value) expect(r.state.changed_at).toBe(iso(now));
      expect(Date.parse(r.state.changed_at)).toBeGreaterThanOrEqual(Date.parse(prev.changed_at));
    });
  });
});
