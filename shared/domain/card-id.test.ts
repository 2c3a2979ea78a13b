import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { normaliseCardId } from "./card-id.ts";

const hexDigit = fc.constantFrom(..."0123456789abcdefABCDEF");
const SPEC_FORM = /^(?:[0-9a-f]{2}){1,10}$/; // lowercase hex, no separators, even length, at most 20

describe("card id normalisation", () => {
  it("a canonical id is returned unchanged", () => {
    expect(normaliseCardId("04a23b1c")).toBe("04a23b1c");
  });

  it("upper case is lowered", () => {
    expect(normaliseCardId("04A23B1C")).toBe("04a23b1c");
  });

  it("':', '-', '.' and blank separators and surrounding blanks are removed", () => {
    for (const raw of [
      "04:A2:3B:1C",
      "04-a2-3b-1c",
      "04.a2.3b.1c",
      "04 a2 3b 1c",
      "  04a23b1c\r\n",
      "04:a2-3b 1c",
    ]) {
      expect(normaliseCardId(raw), raw).toBe("04a23b1c");
    }
  });

  it("an odd number of hex digits is rejected, not padded (the spec's ids are whole bytes)", () => {
    // Padding guessed where a lost digit belonged: "4A:2:3B" → "04a23b", although the card is 4a023b.
    expect(normaliseCardId("abc")).toBeNull();
    expect(normaliseCardId("4A:2:3B")).toBeNull();
    expect(normaliseCardId("0")).toBeNull();
  });

  it("at most 20 hex digits are accepted", () => {
    expect(normaliseCardId("a1".repeat(10))).toBe("a1".repeat(10));
    expect(normaliseCardId("a1".repeat(11))).toBeNull();
    expect(normaliseCardId(`${"A1:".repeat(9)}A1`)).toBe("a1".repeat(10)); // separators do not count
    expect(normaliseCardId(`${"a1".repeat(10)}0`)).toBeNull();
  });

  it("non-hex characters and empty input are rejected", () => {
    for (const raw of [
      "",
      "   ",
      ":-:",
      "04g2",
      "0x04a2",
      "04_a2",
      "04a2é1",
      "04a2/",
      "+04a2",
      "04a2\u0000",
    ]) {
      expect(normaliseCardId(raw), JSON.stringify(raw)).toBeNull();
    }
  });

  it("any even-length hex string of at most 20 digits, in any case and with separators, normalises to its lowercase digits", () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(hexDigit, hexDigit, fc.constantFrom("", ":", "-")), {
          minLength: 1,
          maxLength: 10,
        }),
        (groups) => {
          const raw = groups.map(([a, b, sep]) => a + b + sep).join("");
          expect(normaliseCardId(raw)).toBe(
            groups
              .map(([a, b]) => a + b)
              .join("")
              .toLowerCase(),
          );
        },
      ),
    );
  });

  it("the result is always null or in the spec's form, and normalising it again changes nothing", () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.stringMatching(/^[0-9a-fA-F:\- ]{0,24}$/)), (raw) => {
        const id = normaliseCardId(raw);
        if (id !== null) {
          expect(id).toMatch(SPEC_FORM);
          expect(normaliseCardId(id)).toBe(id);
        }
      }),
    );
  });
});
