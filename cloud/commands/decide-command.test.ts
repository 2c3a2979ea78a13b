import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type CommandRequest, FORCE_UNLOCK_REASONS } from "../../shared/api/command.ts";
import { ERROR_STATUS } from "../../shared/api/errors.ts";
import { PERMISSIONS, type Permission } from "../../shared/api/permissions.ts";
import {
  DEVICE_STATE_VALUES,
  type DeviceState,
  type DeviceStateValue,
  isInterim,
  transitionDevice,
} from "../../shared/domain/device-machine.ts";
import {
  COMMAND_NAMES,
  commandsFor,
  DEVICE_TYPES,
  familyOf,
  isThrottled,
  POWER_SAVE_STRATEGIES,
  SLEEP_STATES,
} from "../../shared/domain/device-types.ts";
import { releasesOwn, type Use } from "../../shared/domain/device-use.ts";
import type { Principal } from "../auth/principal.ts";
import { DEFAULT_COMMAND_TIMEOUTS as LIMITS, throttleWindowMs, timeoutsFor } from "../devices/timeouts.ts";
import { drivesDeviceState } from "./command-events.ts";
import { type CallerFacts, FIELDS_OF } from "./command-rules.ts";
import { type CommandDecision, type DeviceFacts, decideCommand } from "./decide-command.ts";
import { holdingOf } from "./device-holding.ts";

const T0 = Date.parse("2026-03-02T09:00:00.000Z");
const at = (ms: number) => new Date(T0 + ms);
const iso = (ms: number) => at(ms).toISOString();
const NOW = at(0);
const HOUR = 60 * 60 * 1000;
const DEVICE_ID = "5d0b3a52-8f6e-4c61-9d2c-0a4e7f1b2c3d";
const COMMAND_ID = "9a1f6c0e-2b7d-4e35-8c44-6f0d1e2a3b4c";
const IN_FLIGHT = "0c3e5a7b-9d1f-4a2c-8e6b-1f2a3b4c5d6e";

function principal(id: string, ...permissions: Permission[]): Principal {
  return { kind: "client", id, operatorId: "op-1", permissions: new Set(permissions) };
}
const ADMIN = principal("admin", "DEVICE_ADMIN", "ACT_ON_BEHALF_OF");
const APP = principal("app");

const state = (value: DeviceStateValue, timeout_at: string | null = null): DeviceState => ({
  value,
  changed_at: iso(-HOUR),
  timeout_at,
  restore: null,
});

/** An available locker, never commanded, unless overridden. */
function aLocker(override: Partial<DeviceFacts> = {}): DeviceFacts {
  return {
    id: DEVICE_ID,
    type: "LOCKER",
    has_camera: false,
    power_save_strategy: "NONE",
    sleep_state: "",
    state: state("UNLOCKED"),
    command_id: null,
    last_lock_command_at: null,
    booked_by: null,
    user_id: null,
    ...override,
  };
}

/** The caller may use the location, and a lock's user_id names a user. */
const OPEN: CallerFacts = { hasAccess: true, onBehalfKnown: true };

const decide = (device: DeviceFacts, who: Principal, body: CommandRequest, now = NOW, caller = OPEN) =>
  decideCommand(device, who, caller, { id: COMMAND_ID, body }, now, LIMITS);

function accepted(d: CommandDecision) {
  if (!d.accepted) throw new Error(`refused: ${d.refusal.code} ${d.refusal.message}`);
  return d;
}
function refusal(d: CommandDecision) {
  if (d.accepted) throw new Error("accepted");
  return d.refusal;
}

describe("decideCommand: acceptance", () => {
  it("a lock holds the locker ALLOCATED for the delivery window and goes out to the gateway", () => {
    const d = accepted(decide(aLocker(), APP, { command: "lock" }));
    const delivery = iso(LIMITS.deliveryMs);
    expect(d.device).toEqual({
      state: {
        value: "ALLOCATED",
        changed_at: iso(0),
        timeout_at: delivery,
        restore: { value: "UNLOCKED", timeout_at: null },
      },
      command_id: COMMAND_ID,
      last_lock_command_at: iso(0),
      user_id: null,
    });
    expect(d.command).toMatchObject({
      id: COMMAND_ID,
      operator_id: "op-1",
      device_id: DEVICE_ID,
      name: "lock",
      state: { value: "NOT_SENT", reason: "", timeout_at: delivery },
      params: { command: "lock" },
      requested_by: "app",
      events: [{ name: "REQUEST_INITIATED", timestamp: iso(0) }],
      created_at: iso(0),
      updated_at: iso(0),
    });
    expect(d.command.wire_request).toEqual({
      command_id: COMMAND_ID,
      device_id: DEVICE_ID,
      name: "lock",
      params: {},
      issued_at: iso(0),
      expires_at: delivery,
    });
    expect(d.supersedes).toBeNull();
  });

  it("a lock for another user names the occupant", () => {
    const d = accepted(decide(aLocker(), ADMIN, { command: "lock", user_id: "rider-7" }));
    expect(d.device.user_id).toBe("rider-7");
  });

  it("a power-saving device gets the longer delivery window", () => {
    const d = accepted(decide(aLocker({ power_save_strategy: "REMOTE_WAKEUP" }), APP, { command: "lock" }));
    expect(d.command.state.timeout_at).toBe(iso(LIMITS.deliveryMs + LIMITS.wakeupExtraMs));
  });

  it("a booking travels to the gateway: the locker is held ALLOCATED for the booker, the wire names holder and end", () => {
    const d = accepted(decide(aLocker(), APP, { command: "book", timeout_at: "2026-03-02T11:30:00+02:00" }));
    const delivery = iso(LIMITS.deliveryMs);
    expect(d.device).toEqual({
      state: {
        value: "ALLOCATED",
        changed_at: iso(0),
        timeout_at: delivery,
        restore: { value: "UNLOCKED", timeout_at: null },
      },
      command_id: COMMAND_ID,
      booked_by: "app",
    });
    expect(d.command.state).toEqual({ value: "NOT_SENT", reason: "", timeout_at: delivery });
    expect(d.command.events.map((e) => e.name)).toEqual(["REQUEST_INITIATED"]);
    expect(d.command.wire_request).toEqual({
      command_id: COMMAND_ID,
      device_id: DEVICE_ID,
      name: "book",
      params: { booking: { holder: "app", until: iso(HOUR / 2) } },
      issued_at: iso(0),
      expires_at: delivery,
    });
  });

  it("a booking without timeout_at ends one hour after the command", () => {
    const d = accepted(decide(aLocker(), APP, { command: "book" }));
    expect(d.command.wire_request?.params.booking).toEqual({ holder: "app", until: iso(HOUR) });
  });

  it("cancelling one's own booking changes nothing until the gateway confirms it", () => {
    const booked = aLocker({ state: state("BOOKED", iso(HOUR)), booked_by: "app" });
    const d = accepted(decide(booked, APP, { command: "cancel-booking" }));
    expect(d.device).toEqual({});
    expect(d.command.wire_request).toMatchObject({ name: "cancel-booking", params: {} });
    expect(d.supersedes).toBeNull();
  });

  it("a force command takes over the command in flight and names it on the wire", () => {
    const locking = aLocker({
      state: { ...state("ALLOCATED", iso(5_000)), restore: { value: "UNLOCKED", timeout_at: null } },
      command_id: IN_FLIGHT,
      last_lock_command_at: iso(-10_000),
    });
    const d = accepted(decide(locking, ADMIN, { command: "force-unlock", reason: "MAINTENANCE" }));
    expect(d.supersedes).toEqual({ id: IN_FLIGHT, reason: "superseded by force-unlock" });
    expect(d.command.wire_request).toMatchObject({
      supersedes: IN_FLIGHT,
      params: { reason: "MAINTENANCE" },
    });
    expect(d.device.command_id).toBe(COMMAND_ID);
    expect(d.device.state?.value).toBe("UNLOCKING");
  });

  it("sync-device changes no state and supersedes nothing, but counts for the throttle", () => {
    const d = accepted(decide(aLocker({ command_id: IN_FLIGHT }), ADMIN, { command: "sync-device" }));
    expect(d.device).toEqual({ last_lock_command_at: iso(0) });
    expect(d.supersedes).toBeNull();
    expect(d.command.wire_request?.supersedes).toBeUndefined();
  });
});

describe("decideCommand: refusals, in the order a caller would fix them", () => {
  it("a command the device type does not take is refused before anything else", () => {
    const door = aLocker({ type: "DOOR", state: state("LOCKED"), sleep_state: "DEEP_SLEEP" });
    expect(refusal(decide(door, APP, { command: "force-lock", user_id: "x" }))).toEqual({
      code: "ERRORS.COMMAND_NOT_SUPPORTED",
      message: "A DOOR device does not accept force-lock; it accepts: unlock",
      context: { command: "force-lock", accepted: ["unlock"] },
      headers: {},
    });
    const guard = aLocker({ type: "GUARD" });
    expect(refusal(decide(guard, ADMIN, { command: "take-photo" })).message).toMatch(/accepts: no commands$/);
  });

  it("admin commands need DEVICE_ADMIN", () => {
    for (const command of ["force-lock", "force-cancel-booking", "sync-device"] as const) {
      expect(refusal(decide(aLocker(), APP, { command })).code).toBe("ERRORS.FORBIDDEN");
    }
  });

  it("a field another command uses is named", () => {
    expect(refusal(decide(aLocker(), APP, { command: "lock", timeout_at: iso(HOUR) }))).toEqual({
      code: "ERRORS.VALIDATION_FAILED",
      message: "timeout_at: is not used by lock",
      context: { field: "timeout_at" },
      headers: {},
    });
  });

  it("a booking must end in the future", () => {
    expect(refusal(decide(aLocker(), APP, { command: "book", timeout_at: iso(0) })).code).toBe(
      "ERRORS.INVALID_TIMEOUT_AT",
    );
  });

  it("locking for someone else needs ACT_ON_BEHALF_OF; for oneself it does not", () => {
    expect(refusal(decide(aLocker(), APP, { command: "lock", user_id: "rider-7" })).context).toEqual({
      field: "user_id",
    });
    accepted(decide(aLocker(), APP, { command: "lock", user_id: "app" }));
  });

  it("force-unlock needs a reason, and some reasons a comment of five characters", () => {
    expect(refusal(decide(aLocker(), ADMIN, { command: "force-unlock" })).message).toBe(
      "reason: is required for force-unlock",
    );
    const short = { command: "force-unlock", reason: "OTHER", comment: " abc " } as const;
    expect(refusal(decide(aLocker(), ADMIN, short)).context).toEqual({ field: "comment" });
    accepted(decide(aLocker(), ADMIN, { ...short, comment: "stuck chain" }));
  });

  it("a LOCAL_WAKEUP device in deep sleep takes only bookings, which need the gateway alone", () => {
    const asleep = aLocker({ power_save_strategy: "LOCAL_WAKEUP", sleep_state: "DEEP_SLEEP" });
    expect(refusal(decide(asleep, APP, { command: "lock" })).code).toBe("ERRORS.DEVICE_ASLEEP");
    accepted(decide(asleep, APP, { command: "book" }));
  });

  it("a second latch command within the window is throttled, with Retry-After in whole seconds", () => {
    const recent = aLocker({ state: state("LOCKED"), last_lock_command_at: iso(-1_200) });
    expect(refusal(decide(recent, APP, { command: "unlock" }))).toEqual({
      code: "ERRORS.LOCK_COMMAND_THROTTLED",
      message: "Another command that moves this device was sent less than 3 s ago",
      context: {},
      headers: { "retry-after": "2" },
    });
    accepted(decide(recent, APP, { command: "unlock" }, at(1_800)));
    const saving = { ...recent, power_save_strategy: "REMOTE_WAKEUP" as const };
    expect(refusal(decide(saving, APP, { command: "unlock" }, at(1_800))).headers).toEqual({
      "retry-after": "12",
    });
  });

  it("only the booker cancels a booking; force-cancel-booking is for everyone else", () => {
    const booked = aLocker({ state: state("BOOKED", iso(HOUR)), booked_by: "someone" });
    expect(refusal(decide(booked, APP, { command: "cancel-booking" })).code).toBe("ERRORS.FORBIDDEN");
    accepted(decide(booked, ADMIN, { command: "force-cancel-booking" }));
  });

  it("a command the state forbids names the state", () => {
    expect(refusal(decide(aLocker(), APP, { command: "unlock" }))).toEqual({
      code: "ERRORS.COMMAND_NOT_ALLOWED_IN_STATE",
      message: "Command unlock is not allowed while the device is UNLOCKED",
      context: { state: "UNLOCKED" },
      headers: {},
    });
  });
});

describe("decideCommand properties", () => {
  const stableArb = fc.record({
    value: fc.constantFrom<DeviceStateValue>("UNLOCKED", "BOOKED", "LOCKED"),
    timeout_at: fc.option(fc.integer({ min: -2 * HOUR, max: 2 * HOUR }).map(iso)),
  });
  const stateArb: fc.Arbitrary<DeviceState> = fc.record({
    value: fc.constantFrom(...DEVICE_STATE_VALUES),
    changed_at: fc.integer({ min: -2 * HOUR, max: 0 }).map(iso),
    timeout_at: fc.option(fc.integer({ min: -2 * HOUR, max: 2 * HOUR }).map(iso)),
    restore: fc.option(stableArb),
  });
  const deviceArb: fc.Arbitrary<DeviceFacts> = fc.record({
    id: fc.constant(DEVICE_ID),
    type: fc.oneof(fc.constantFrom(...DEVICE_TYPES), fc.constant("LOCKER" as const)),
    has_camera: fc.boolean(),
    power_save_strategy: fc.constantFrom(...POWER_SAVE_STRATEGIES),
    sleep_state: fc.constantFrom(...SLEEP_STATES),
    state: stateArb,
    command_id: fc.option(fc.constant(IN_FLIGHT)),
    last_lock_command_at: fc.option(fc.integer({ min: -30_000, max: 0 }).map(iso)),
    booked_by: fc.option(fc.constantFrom("app", "admin", "someone", "rider-1")),
    user_id: fc.option(fc.constantFrom("rider-1", "rider-7", "someone")),
  });
  const clientArb = fc
    .record({ id: fc.constantFrom("app", "admin"), permissions: fc.subarray([...PERMISSIONS]) })
    .map(({ id, permissions }) => principal(id, ...permissions));
  const riderArb = fc
    .constantFrom("rider-1", "rider-7")
    .map((id): Principal => ({ kind: "user", id, operatorId: "op-1", permissions: new Set() }));
  const principalArb = fc.oneof(clientArb, riderArb);
  const fieldsArb = fc.record(
    {
      timeout_at: fc.integer({ min: -HOUR, max: 3 * HOUR }).map(iso),
      user_id: fc.constantFrom("app", "admin", "rider-1", "rider-7"),
      reason: fc.constantFrom(...FORCE_UNLOCK_REASONS),
      comment: fc.string({ maxLength: 12 }),
      power_cycle: fc.boolean(),
    },
    { requiredKeys: [] },
  );
  /** Mostly the fields the command uses, sometimes one it does not. */
  const bodyArb: fc.Arbitrary<CommandRequest> = fc
    .record({ command: fc.constantFrom(...COMMAND_NAMES), fields: fieldsArb, stray: fc.nat(4) })
    .map(({ command, fields, stray }) => {
      const used = FIELDS_OF[command] ?? [];
      const kept = Object.entries(fields).filter(([k]) => stray === 0 || (used as string[]).includes(k));
      return { command, ...Object.fromEntries(kept) };
    });
  const caseArb = fc.record({
    device: deviceArb,
    who: principalArb,
    body: bodyArb,
    caller: fc.record({ hasAccess: fc.boolean(), onBehalfKnown: fc.boolean() }),
  });
  // About one case in ten is accepted; enough runs that each acceptance property sees a hundred.
  const RUNS = { numRuns: 1_000 };
  type Case = { device: DeviceFacts; who: Principal; body: CommandRequest; caller: CallerFacts };
  const check = (visit: (c: Case & { d: CommandDecision }) => void) =>
    fc.assert(
      fc.property(caseArb, (c) => visit({ ...c, d: decide(c.device, c.who, c.body, NOW, c.caller) })),
      RUNS,
    );

  it("is a function of its inputs: the same inputs give the same decision, and the inputs stay as they were", () => {
    fc.assert(
      fc.property(caseArb, ({ device, who, body, caller }) => {
        const before = structuredClone({ device, body });
        expect(decide(device, who, body, NOW, caller)).toEqual(decide(device, who, body, NOW, caller));
        expect({ device, body }).toEqual(before);
      }),
      RUNS,
    );
  });

  it("a refusal carries an error code the API answers with 4xx and a message", () => {
    check(({ d }) => {
      if (d.accepted) return;
      expect(ERROR_STATUS[d.refusal.code]).toBeGreaterThanOrEqual(400);
      expect(ERROR_STATUS[d.refusal.code]).toBeLessThan(500);
      expect(d.refusal.message).not.toBe("");
    });
  });

  it("a command the device type does not take is always COMMAND_NOT_SUPPORTED, whatever else is wrong", () => {
    check(({ device, body, d }) => {
      if (commandsFor(device.type, device.has_camera).includes(body.command)) return;
      expect(d.accepted ? null : d.refusal.code).toBe("ERRORS.COMMAND_NOT_SUPPORTED");
    });
  });

  it("admin commands, take-photo among them, are never accepted without DEVICE_ADMIN, nor from a rider", () => {
    check(({ who, body, d }) => {
      const admin = ["force-lock", "force-unlock", "force-cancel-booking", "sync-device", "take-photo"];
      if (!admin.includes(body.command)) return;
      if (!who.permissions.has("DEVICE_ADMIN") || who.kind === "user") expect(d.accepted).toBe(false);
    });
  });

  /** Whom an accepted lock, book, unlock or cancel-booking acted for, unless the operator. */
  const personOf = ({ who, body }: Case): string | null => {
    if (who.kind === "user") return who.id;
    return body.command === "lock" && body.user_id !== undefined ? body.user_id : null;
  };
  const USES = ["lock", "book", "unlock", "cancel-booking"];

  it("a rider (or an integrator acting for one) never uses a locker someone else holds or booked", () => {
    check((c) => {
      const person = personOf(c);
      if (!c.d.accepted || person === null || !USES.includes(c.body.command)) return;
      if (familyOf(c.device.type) !== "locking") return;
      const h = holdingOf(c.device);
      if (releasesOwn({ use: c.body.command as Use, actor: { id: person, operator: false }, holding: h }))
        return;
      expect(h.inUse && h.occupant !== person).toBe(false);
      expect(h.booker !== null && h.booker !== person).toBe(false);
    });
  });

  it("without access, a rider only releases what they hold", () => {
    check((c) => {
      const person = personOf(c);
      if (!c.d.accepted || person === null || c.caller.hasAccess || !USES.includes(c.body.command)) return;
      const holding = holdingOf(c.device);
      const use = c.body.command as Use;
      expect(releasesOwn({ use, actor: { id: person, operator: false }, holding })).toBe(true);
    });
  });

  it("cancel-booking ends only the caller's own booking, whoever calls", () => {
    check(({ who, body, device, d }) => {
      if (body.command !== "cancel-booking" || !d.accepted) return;
      expect(device.booked_by === null || device.booked_by === who.id).toBe(true);
    });
  });

  it("a lock naming a user who does not exist is refused, and the refusal says so only to a caller who may name users", () => {
    check(({ who, body, caller, d }) => {
      if (body.command !== "lock" || body.user_id === undefined || caller.onBehalfKnown) return;
      expect(d.accepted).toBe(false);
      if (d.accepted || d.refusal.code !== "ERRORS.UNKNOWN_USER") return;
      expect(body.user_id === who.id || who.permissions.has("ACT_ON_BEHALF_OF")).toBe(true);
    });
  });

  it("an accepted device state is the state machine's transition, and only then does the state change", () => {
    check(({ device, body, d }) => {
      if (!d.accepted) return;
      const tr = transitionDevice(
        familyOf(device.type),
        device.state,
        { kind: "command", name: body.command },
        NOW,
        timeoutsFor(LIMITS, device.power_save_strategy),
      );
      expect(tr.refused).toBe(false);
      if (!tr.refused) expect(d.device.state).toEqual(tr.changed ? tr.state : undefined);
    });
  });

  it("a command that moves the latch, or a book, holds the device in an interim state under its own id", () => {
    check(({ body, d }) => {
      if (!d.accepted) return;
      if (drivesDeviceState(body.command)) {
        expect(d.device.command_id).toBe(COMMAND_ID);
        expect(isInterim(d.device.state?.value ?? "UNLOCKED")).toBe(true);
      } else {
        expect(d.device.command_id ?? null).toBeNull();
      }
    });
  });

  it("every command goes out NOT_SENT until its deadline, bookings too, and only a book carries a booking", () => {
    check(({ body, d }) => {
      if (!d.accepted) return;
      const { state: s, wire_request: wire } = d.command;
      expect(s.value).toBe("NOT_SENT");
      expect(wire?.expires_at).toBe(s.timeout_at);
      expect(Date.parse(s.timeout_at ?? "")).toBeGreaterThan(NOW.getTime());
      expect(d.command.events).toEqual([{ name: "REQUEST_INITIATED", timestamp: iso(0) }]);
      const booking = wire?.params.booking;
      if (body.command !== "book") expect(booking).toBeUndefined();
      else expect(Date.parse(booking?.until ?? "")).toBeGreaterThan(NOW.getTime());
    });
  });

  it("a latch command is accepted only outside the throttle window, and then restarts it", () => {
    check(({ device, body, d }) => {
      if (!isThrottled(body.command)) {
        if (d.accepted) expect(d.device.last_lock_command_at).toBeUndefined();
        return;
      }
      const window = throttleWindowMs(LIMITS, device.power_save_strategy);
      const since = device.last_lock_command_at ? T0 - Date.parse(device.last_lock_command_at) : Infinity;
      if (d.accepted) {
        expect(since).toBeGreaterThanOrEqual(window);
        expect(d.device.last_lock_command_at).toBe(iso(0));
      } else if (d.refusal.code === "ERRORS.LOCK_COMMAND_THROTTLED") {
        const retry = Number(d.refusal.headers["retry-after"]);
        expect(retry).toBeGreaterThanOrEqual(1);
        expect(retry * 1000).toBeGreaterThanOrEqual(window - since);
        expect(retry).toBeLessThanOrEqual(window / 1000);
      }
    });
  });

  it("supersedes exactly the command in flight, only for a command that moves the latch, on the wire too", () => {
    check(({ device, body, d }) => {
      if (!d.accepted) return;
      const takesOver = drivesDeviceState(body.command) && device.command_id !== null;
      expect(d.supersedes?.id ?? null).toBe(takesOver ? device.command_id : null);
      expect(d.command.wire_request?.supersedes ?? null).toBe(takesOver ? device.command_id : null);
    });
  });
});
