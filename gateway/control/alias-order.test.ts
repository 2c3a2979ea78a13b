import { describe, expect, it } from "vitest";
import { compareAliases } from "./alias-order.ts";

describe("compareAliases", () => {
  it("orders digits as numbers and text by letter, ignoring case", () => {
    const aliases = [
      "10",
      "2",
      "1",
      "A10",
      "a2",
      "B1",
      "door-north",
      "Door-east",
      "007",
      "7b",
      "7a",
      "100000000000000000001",
    ];
    expect([...aliases].sort(compareAliases)).toEqual([
      "1",
      "2",
      "007",
      "7a",
      "7b",
      "10",
      "100000000000000000001",
      "a2",
      "A10",
      "B1",
      "Door-east",
      "door-north",
    ]);
  });

  it("orders as localeCompare with numeric did for the aliases a manifest gives", () => {
    const aliases = Array.from({ length: 40 }, (_, i) => String(i + 1)).reverse();
    expect([...aliases].sort(compareAliases)).toEqual(
      [...aliases].sort((a, b) => a.localeCompare(b, undefined, { numeric: true })),
    );
  });
});
