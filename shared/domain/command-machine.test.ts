import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  COMMAND_STATE_VALUES,
  type CommandInput,
  type CommandState,
  type CommandStateValue,
  type CommandTimeouts,
  DEADLINE_REASONS,
  initialCommandState,
  isTerminal,
  transitionCommand,
} from "./command-machine.ts";

const T: CommandTimeouts = { deliveryMs: 10_000, hardwareMs: 20_000 };
const T0 = Date.parse("2024-05-01T10:00:00.000Z");
const at = (ms: number) => new Date(T0 + ms);
const iso = (ms: number) => at(ms).toISOString();
const RANK: Record<CommandStateValue, number> = { NOT_SENT: 0, SENT: 1, RECEIVED: 2, SUCCESS: 3, ERROR: 3 };

/** Applies an input that must apply. */
function next(s: CommandState, input: CommandInput, ms: number): CommandState {
  const r = transitionCommand(s, input, at(ms), T);
  if (r === null) throw new Error(`input ${input.kind} was ignored in ${s.value}`);
  return r;
}
const sent = () => next(initialCommandState(at(0), T), { kind: "dispatched" }, 100);
const received = () => next(sent(), { kind: "received" }, 1_000);

describe("command state: happy path", () => {
  it("a new command is NOT_SENT with the delivery deadline", () => {
    expect(initialCommandState(at(0), T)).toEqual({
      value: "NOT_SENT",
      reason: "",
      timeout_at: iso(T.deliveryMs),
    });
  });

  it("dispatching makes the command SENT and keeps the delivery deadline set at creation", () => {
    expect(sent()).toEqual({ value: "SENT", reason: "", timeout_at: iso(T.deliveryMs) });
  });

  it("the device's acknowledgement makes it RECEIVED with the hardware window", () => {
    expect(received()).toEqual({ value: "RECEIVED", reason: "", timeout_at: iso(1_000 + T.hardwareMs) });
  });

  it("hardware completion makes it SUCCESS with no timeout", () => {
    expect(next(received(), { kind: "succeeded" }, 2_000)).toEqual({
      value: "SUCCESS",
      reason: "",
      timeout_at: null,
    });
    expect(next(received(), { kind: "succeeded", reason: "locked" }, 2_000).reason).toBe("locked");
  });

  it.each([
    ["NOT_SENT", () => initialCommandState(at(0), T)],
    ["SENT", sent],
    ["RECEIVED", received],
  ] as const)("a failure in %s ends the command in ERROR with its reason", (_value, make) => {
    expect(next(make(), { kind: "failed", reason: "device offline" }, 2_000)).toEqual({
      value: "ERROR",
      reason: "device offline",
      timeout_at: null,
    });
  });
});

describe("command state: forward only", () => {
  it("RECEIVED after SUCCESS is ignored", () => {
    const done = next(received(), { kind: "succeeded" }, 2_000);
    expect(transitionCommand(done, { kind: "received" }, at(3_000), T)).toBeNull();
  });

  it("SENT after RECEIVED is ignored", () => {
    expect(transitionCommand(received(), { kind: "dispatched" }, at(2_000), T)).toBeNull();
  });

  it("a repeated acknowledgement does not extend the hardware window", () => {
    expect(transitionCommand(received(), { kind: "received" }, at(5_000), T)).toBeNull();
  });

  it("a late success after an ERROR is ignored", () => {
    const failed = next(sent(), { kind: "failed", reason: "x" }, 2_000);
    expect(transitionCommand(failed, { kind: "succeeded" }, at(3_000), T)).toBeNull();
  });
});

describe("command state: deadlines", () => {
  it.each([
    ["NOT_SENT", () => initialCommandState(at(0), T), T.deliveryMs],
    ["SENT", sent, T.deliveryMs],
    ["RECEIVED", received, 1_000 + T.hardwareMs],
  ] as const)(
    "a command in %s is left alone before its deadline and fails once it is reached",
    (value, make, due) => {
      const s = make();
      expect(transitionCommand(s, { kind: "deadline" }, at(due - 1), T)).toBeNull();
      expect(next(s, { kind: "deadline" }, due)).toEqual({
        value: "ERROR",
        reason: DEADLINE_REASONS[value],
        timeout_at: null,
      });
    },
  );

  it("the deadline reasons name the missed step", () => {
    expect(DEADLINE_REASONS.SENT).toMatch(/delivery deadline exceeded/);
    expect(DEADLINE_REASONS.RECEIVED).toMatch(/confirmation deadline exceeded/);
  });

  it("a deadline after SUCCESS is ignored", () => {
    const done = next(received(), { kind: "succeeded" }, 2_000);
    expect(transitionCommand(done, { kind: "deadline" }, at(10 * T.hardwareMs), T)).toBeNull();
  });
});

describe("command state properties", () => {
  const inputArb: fc.Arbitrary<CommandInput> = fc.oneof(
    fc.constant<CommandInput>({ kind: "dispatched" }),
    fc.constant<CommandInput>({ kind: "received" }),
    fc.option(fc.string(), { nil: undefined }).map((reason): CommandInput => ({ kind: "succeeded", reason })),
    fc.string().map((reason): CommandInput => ({ kind: "failed", reason })),
    fc.constant<CommandInput>({ kind: "deadline" }),
  );
  const stepsArb = fc.array(fc.record({ input: inputArb, dt: fc.integer({ min: 0, max: 30_000 }) }), {
    maxLength: 40,
  });

  type Visit = (prev: CommandState, result: CommandState | null, input: CommandInput, now: number) => void;
  /** Walks a fresh command through the steps, keeping the old state when an input is ignored. */
  const check = (visit: Visit) =>
    fc.assert(
      fc.property(stepsArb, (steps) => {
        let s = initialCommandState(at(0), T);
        let now = 0;
        for (const { input, dt } of steps) {
          now += dt;
          const r = transitionCommand(s, input, at(now), T);
          visit(s, r, input, now);
          s = r ?? s;
        }
      }),
    );

  it("no input sequence takes a command outside COMMAND_STATE_VALUES", () => {
    check((_p, r) => {
      if (r) expect(COMMAND_STATE_VALUES).toContain(r.value);
    });
  });

  it("once SUCCESS or ERROR, every further input is ignored", () => {
    check((prev, r) => {
      if (isTerminal(prev.value)) expect(r).toBeNull();
    });
  });

  it("terminal states have no timeout and the others always have one", () => {
    check((_p, r) => {
      if (r) expect(r.timeout_at === null).toBe(isTerminal(r.value));
    });
  });

  it("progress never moves backwards, and an applied input always moves forward", () => {
    check((prev, r) => {
      if (r) expect(RANK[r.value]).toBeGreaterThan(RANK[prev.value]);
    });
  });

  it("a deadline fails a live command exactly when its timeout_at has been reached", () => {
    check((prev, r, input, now) => {
      const live = prev.value;
      if (input.kind !== "deadline" || live === "SUCCESS" || live === "ERROR") return;
      const due = prev.timeout_at !== null && Date.parse(prev.timeout_at) <= T0 + now;
      expect(r).toEqual(due ? { value: "ERROR", reason: DEADLINE_REASONS[live], timeout_at: null } : null);
    });
  });
});
