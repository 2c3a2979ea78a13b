import { afterEach, describe, expect, it } from "vitest";
import { createMemoryGpioBank, type MemoryGpioBank } from "../../gateway/adapters/gpio/gpio-memory.ts";
import { createOnoffGpioBank } from "../../gateway/adapters/gpio/gpio-onoff.ts";
import { SimGpioBank } from "../../hardware-sim/gpio-lines.ts";
import { GPIO_LINE_KINDS, parseGpioLineName } from "../../shared/protocol/gpio-lines.ts";
import { createMockSysfs, type MockSysfs } from "../support/onoff-mock-sysfs.ts";
import { CONTRACT_LINES, gpioBankContract } from "../support/port-contracts/gpio-bank.contract.ts";

const NAMES = Object.keys(CONTRACT_LINES);

// The passive bank for development runs without GPIO hardware.
gpioBankContract("memory bank (gpio-memory)", () => {
  let bank: MemoryGpioBank | null = null;
  return {
    open: () => {
      bank = createMemoryGpioBank(NAMES);
      return bank;
    },
    drive: (name, active) => bank?.set(name, active),
    dispose: () => {},
  };
});

// The simulator's lines, which the test harness hands the gateway.
gpioBankContract("simulator bank (hardware-sim)", () => {
  const sim = new SimGpioBank(NAMES);
  return { open: () => sim, drive: (name, active) => sim.simLine(name).set(active), dispose: () => {} };
});

// The production adapter: onoff's own Gpio class on a mock sysfs. The hardware sets electrical levels;
// the contract speaks logical values, so an active-low line is driven inverted.
gpioBankContract("onoff on a mock sysfs (gpio-onoff)", () => {
  // At rest, as the other rigs start: the door open (its active-low contact pulled high), the case shut.
  const sysfs = createMockSysfs({ [CONTRACT_LINES["door_contact:north"]]: true });
  return {
    open: () => createOnoffGpioBank({ ...CONTRACT_LINES }, sysfs.Gpio),
    drive(name, active) {
      const kind = parseGpioLineName(name)?.kind;
      const activeLow = kind ? GPIO_LINE_KINDS[kind].activeLow : false;
      sysfs.setLevel(CONTRACT_LINES[name], active !== activeLow);
    },
    dispose: () => sysfs.remove(),
  };
});

describe("onoff adapter on a mock sysfs: what it asks of the kernel", () => {
  let sysfs: MockSysfs;
  afterEach(() => sysfs.remove());

  it("exports each pin with its kind's direction, edge and active level, and unexports on close", () => {
    sysfs = createMockSysfs();
    const bank = createOnoffGpioBank({ ...CONTRACT_LINES }, sysfs.Gpio);
    const attrs = (pin: number) => ({
      direction: sysfs.attribute(pin, "direction"),
      edge: sysfs.attribute(pin, "edge"),
      active_low: sysfs.attribute(pin, "active_low"),
    });
    expect(attrs(17)).toEqual({ direction: "out", edge: "none", active_low: "0" });
    expect(attrs(27)).toEqual({ direction: "in", edge: "both", active_low: "1" });
    expect(attrs(22)).toEqual({ direction: "in", edge: "both", active_low: "0" });
    // A shut door pulls its contact low: active-low, so it reads closed (true).
    sysfs.setLevel(27, false);
    expect(bank.line("door_contact:north").read()).toBe(true);
    bank.line("door_strike:north").write(true);
    expect(sysfs.level(17)).toBe(true);
    bank.close();
    expect([17, 27, 22].map((p) => sysfs.isExported(p))).toEqual([false, false, false]);
  });

  it("refuses a line whose kind the protocol does not name", () => {
    sysfs = createMockSysfs();
    expect(() => createOnoffGpioBank({ "door_bell:north": 5 }, sysfs.Gpio)).toThrow(/unknown kind door_bell/);
  });
});
