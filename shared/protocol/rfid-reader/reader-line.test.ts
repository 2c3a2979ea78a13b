import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseReaderLine, type ReaderLine, readerLine } from "./reader-line.ts";

const hexDigit = fc.constantFrom(..."0123456789abcdef");
/** Card ids in the spec's form: lowercase hex, even length, 2–20 characters. */
const cardId = fc
  .array(fc.tuple(hexDigit, hexDigit), { minLength: 1, maxLength: 10 })
  .map((pairs) => pairs.map(([a, b]) => a + b).join(""));
/** A HELLO field: printable ASCII without whitespace. */
const token = fc.string({
  unit: fc.integer({ min: 0x21, max: 0x7e }).map((c) => String.fromCharCode(c)),
  minLength: 1,
  maxLength: 12,
});

describe("RFID reader lines", () => {
  it("HELLO <model> <firmware> is a hello", () => {
    expect(parseReaderLine("HELLO RDM6300 1.4.2\r\n")).toEqual({
      kind: "hello",
      model: "RDM6300",
      firmware: "1.4.2",
    });
  });

  it("ALIVE is an alive", () => {
    expect(parseReaderLine("ALIVE\r\n")).toEqual({ kind: "alive" });
  });

  it("TAG <uid> is a tap with the uid as a card id", () => {
    expect(parseReaderLine("TAG 04a23b1c\r\n")).toEqual({ kind: "tap", card: "04a23b1c" });
  });

  it("TAG uids in upper or mixed case, with ':' or '-' separators, are normalised", () => {
    for (const uid of ["04A23B1C", "04a23B1c", "04:A2:3B:1C", "04-a2-3b-1c", "04:a2-3B:1c"]) {
      expect(parseReaderLine(`TAG ${uid}\r\n`), uid).toEqual({ kind: "tap", card: "04a23b1c" });
    }
  });

  it("a line with CR LF, LF only, CR only or no terminator parses the same", () => {
    for (const end of ["\r\n", "\n", "\r", "", "\r\n\r\n"]) {
      expect(parseReaderLine(`TAG 04A2${end}`), JSON.stringify(end)).toEqual({ kind: "tap", card: "04a2" });
      expect(parseReaderLine(`ALIVE${end}`), JSON.stringify(end)).toEqual({ kind: "alive" });
    }
  });

  it("surrounding blanks and repeated spaces between fields are tolerated", () => {
    expect(parseReaderLine("  HELLO  X1   2.0 \r\n")).toEqual({
      kind: "hello",
      model: "X1",
      firmware: "2.0",
    });
    expect(parseReaderLine("\nTAG\t0A0B\r\n")).toEqual({ kind: "tap", card: "0a0b" });
  });

  it("a 20-hex-digit uid is accepted; 22 digits are garbage", () => {
    expect(parseReaderLine(`TAG ${"ab".repeat(10)}\r\n`)).toEqual({ kind: "tap", card: "ab".repeat(10) });
    expect(parseReaderLine(`TAG ${"AB".repeat(11)}\r\n`)).toEqual({
      kind: "garbage",
      line: `TAG ${"AB".repeat(11)}`,
    });
  });

  it("empty lines, TAG without a uid, non-hex or odd-length uids and unknown words are garbage", () => {
    const garbage: [string, string][] = [
      ["\r\n", ""],
      ["", ""],
      ["   \r\n", ""],
      ["TAG\r\n", "TAG"],
      ["TAG \r\n", "TAG"],
      ["TAG 04zz\r\n", "TAG 04zz"],
      ["TAG 0x04a2\r\n", "TAG 0x04a2"],
      ["TAG 04a\r\n", "TAG 04a"],
      ["TAG ::\r\n", "TAG ::"],
      ["TAG 04 a2\r\n", "TAG 04 a2"],
      ["tag 04a2\r\n", "tag 04a2"],
      ["HELLO\r\n", "HELLO"],
      ["HELLO X1\r\n", "HELLO X1"],
      ["HELLO X1 2.0 extra\r\n", "HELLO X1 2.0 extra"],
      ["ALIVE now\r\n", "ALIVE now"],
      ["\u0000\u00ff\r\n", "\u0000\u00ff"],
    ];
    for (const [raw, line] of garbage)
      expect(parseReaderLine(raw), JSON.stringify(raw)).toEqual({ kind: "garbage", line });
  });

  it("readerLine writes CR LF terminated lines with the uid in upper case", () => {
    expect(readerLine({ kind: "tap", card: "04a2" })).toBe("TAG 04A2\r\n");
    expect(readerLine({ kind: "hello", model: "X1", firmware: "2.0" })).toBe("HELLO X1 2.0\r\n");
    expect(readerLine({ kind: "alive" })).toBe("ALIVE\r\n");
  });

  it("every line readerLine writes parses back to itself", () => {
    const lineArb: fc.Arbitrary<Exclude<ReaderLine, { kind: "garbage" }>> = fc.oneof(
      fc.record({ kind: fc.constant("tap" as const), card: cardId }),
      fc.record({ kind: fc.constant("hello" as const), model: token, firmware: token }),
      fc.constant({ kind: "alive" as const }),
    );
    fc.assert(
      fc.property(lineArb, (l) => {
        expect(parseReaderLine(readerLine(l))).toEqual(l);
      }),
    );
  });

  it("never throws, and a tap it yields always carries a card id in the spec's form", () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string(),
          cardId.map((c) => `TAG ${c.toUpperCase()}`),
        ),
        (raw) => {
          const l = parseReaderLine(raw);
          if (l.kind === "tap") expect(l.card).toMatch(/^(?:[0-9a-f]{2}){1,10}$/);
        },
      ),
    );
  });
});
