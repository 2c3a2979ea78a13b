import { describe, expect, it } from "vitest";
import {
  GPIO_LINE_KINDS,
  type GpioLineKind,
  gpioLineName,
  gpioLineSpec,
  parseGpioLineName,
} from "./gpio-lines.ts";

describe("GPIO line names", () => {
  it("reads back every name it builds", () => {
    for (const kind of Object.keys(GPIO_LINE_KINDS) as GpioLineKind[]) {
      expect(parseGpioLineName(gpioLineName(kind, "north"))).toEqual({ kind, of: "north" });
      expect(parseGpioLineName(gpioLineName(kind))).toEqual({ kind, of: null });
    }
    // Only the first ':' separates: what follows is the owner's name, whatever it holds.
    expect(parseGpioLineName("power_relay:reader:1")).toEqual({ kind: "power_relay", of: "reader:1" });
  });

  it("knows no kind outside the protocol's table, prototype names included", () => {
    for (const name of ["door_bell:north", "", ":north", "toString", "constructor:x"])
      expect(parseGpioLineName(name)).toBeNull();
  });

  it("gives a line's direction and active level by its name", () => {
    expect(gpioLineSpec("door_contact:north")).toEqual({ direction: "in", activeLow: true });
    expect(gpioLineSpec("door_strike:north")).toEqual({ direction: "out", activeLow: false });
    expect(gpioLineSpec("mystery")).toBeNull();
  });
});
