import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ETX, FRAME_OVERHEAD, MAX_PAYLOAD, STX } from "./constants.ts";
import { checksum, encodeFrame, type Frame } from "./frame.ts";
import { type Discarded, FrameParser } from "./frame-parser.ts";

/** Reference CRC-16/MODBUS (poly 0x8005 reflected = 0xA001, init 0xFFFF, no final xor), bit by bit. */
function crc16ModbusRef(bytes: Iterable<number>): number {
  let crc = 0xffff;
  for (const b of bytes) {
    crc ^= b;
    for (let i = 0; i < 8; i++) crc = crc & 1 ? (crc >>> 1) ^ 0xa001 : crc >>> 1;
  }
  return crc;
}

/** Independent encoder used as the test oracle. */
function refEncode(f: Frame): number[] {
  const body = [f.addr, f.seq & 0xff, f.cmd, f.payload.length, ...f.payload];
  const crc = crc16ModbusRef(body);
  return [STX, ...body, crc & 0xff, crc >> 8, ETX];
}

/** Every position of `s` at which a complete, valid frame starts (independent oracle). */
function validStarts(s: Uint8Array): number[] {
  const out: number[] = [];
  for (let i = 0; i < s.length; i++) {
    if (s[i] !== STX || i + 5 > s.length) continue;
    const len = s[i + 4]!;
    const total = FRAME_OVERHEAD + len;
    if (len > MAX_PAYLOAD || i + total > s.length || s[i + total - 1] !== ETX) continue;
    const crc = s[i + 5 + len]! | (s[i + 6 + len]! << 8);
    if (crc16ModbusRef(s.subarray(i + 1, i + 5 + len)) === crc) out.push(i);
  }
  return out;
}

const concat = (...parts: ArrayLike<number>[]): Uint8Array => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
};

/** Splits `s` into chunks whose sizes cycle through `sizes` (each ≥ 1). */
function chunk(s: Uint8Array, sizes: number[]): Uint8Array[] {
  const out: Uint8Array[] = [];
  for (let at = 0, i = 0; at < s.length; i++) {
    const n = sizes.length > 0 ? sizes[i % sizes.length]! : s.length;
    out.push(s.subarray(at, at + n));
    at += n;
  }
  return out;
}

type Event = { frame: Frame } | { discard: Discarded };

function harness() {
  const events: Event[] = [];
  const parser = new FrameParser(
    (frame) => events.push({ frame }),
    (discard) => events.push({ discard }),
  );
  const frames = () => events.flatMap((e) => ("frame" in e ? [e.frame] : []));
  const discards = () => events.flatMap((e) => ("discard" in e ? [e.discard] : []));
  return { parser, events, frames, discards };
}

const f = (addr: number, seq: number, cmd: number, ...payload: number[]): Frame => ({
  addr,
  seq,
  cmd,
  payload: Uint8Array.from(payload),
});

// Payload bytes biased towards STX/ETX so that framing bytes inside payloads are exercised often.
const byteArb = fc.oneof(
  { weight: 1, arbitrary: fc.constantFrom(STX, ETX) },
  { weight: 3, arbitrary: fc.integer({ min: 0, max: 255 }) },
);
const frameArb: fc.Arbitrary<Frame> = fc.record({
  addr: fc.integer({ min: 1, max: 247 }),
  seq: fc.integer({ min: 0, max: 255 }),
  cmd: fc.integer({ min: 0, max: 255 }),
  payload: fc.array(byteArb, { maxLength: MAX_PAYLOAD }).map((a) => Uint8Array.from(a)),
});
const chunkSizesArb = fc.array(fc.integer({ min: 1, max: 24 }), { maxLength: 8 });
const noStxGarbageArb = fc.array(
  fc.integer({ min: 0, max: 255 }).filter((b) => b !== STX),
  { maxLength: 20 },
);
/**
 * Hostile garbage: stray STX bytes followed by plausible headers (small LEN makes a candidate that waits for
 * bytes, LEN > 64 is rejected at once), truncated frames and ETX bytes, mixed with random bytes.
 */
const stxGarbageArb = fc
  .array(
    fc.oneof(
      fc.array(byteArb, { maxLength: 6 }),
      fc
        .tuple(
          fc.constant(STX),
          fc.array(fc.integer({ min: 0, max: 255 }), { minLength: 3, maxLength: 3 }),
          fc.nat(80),
        )
        .map(([s, h, len]) => [s, ...h, len]),
      fc.tuple(frameArb, fc.nat()).map(([fr, cut]) => {
        const bytes = refEncode(fr);
        return bytes.slice(0, 1 + (cut % (bytes.length - 1))); // a strict, non-empty prefix
      }),
    ),
    { maxLength: 4 },
  )
  .map((parts) => parts.flat());

const frameSize = (fr: Frame) => FRAME_OVERHEAD + fr.payload.length;
const plain = (fr: Frame) => ({ addr: fr.addr, seq: fr.seq, cmd: fr.cmd, payload: [...fr.payload] });

describe("lock-bus frame encoding", () => {
  it("the reference CRC-16/MODBUS matches the standard check value and the library checksum", () => {
    const ascii = new TextEncoder().encode("123456789");
    expect(crc16ModbusRef(ascii)).toBe(0x4b37);
    expect(checksum(ascii)).toBe(0x4b37);
  });

  it("an UNLOCK frame encodes to the exact bytes with the CRC little endian", () => {
    const bytes = encodeFrame(f(1, 0x2a, 0x04, 5, 10));
    const crc = crc16ModbusRef([0x01, 0x2a, 0x04, 0x02, 0x05, 0x0a]);
    expect(crc).toBe(0xab3b);
    expect([...bytes]).toEqual([0x02, 0x01, 0x2a, 0x04, 0x02, 0x05, 0x0a, crc & 0xff, crc >> 8, 0x03]);
    expect([...bytes]).toEqual([0x02, 0x01, 0x2a, 0x04, 0x02, 0x05, 0x0a, 0x3b, 0xab, 0x03]);
  });

  it("a frame without payload is 8 bytes", () => {
    const crc = crc16ModbusRef([0x07, 0x00, 0x06, 0x00]);
    expect([...encodeFrame(f(7, 0, 0x06))]).toEqual([
      0x02,
      0x07,
      0x00,
      0x06,
      0x00,
      crc & 0xff,
      crc >> 8,
      0x03,
    ]);
  });

  it("any frame encodes to STX, header, payload, CRC over ADDR..PAYLOAD little endian, ETX", () => {
    fc.assert(
      fc.property(frameArb, (fr) => {
        expect([...encodeFrame(fr)]).toEqual(refEncode(fr));
      }),
    );
  });

  it("a payload of exactly 64 bytes is accepted; 65 bytes throw a RangeError", () => {
    expect(encodeFrame({ ...f(1, 0, 1), payload: new Uint8Array(64) })).toHaveLength(72);
    expect(() => encodeFrame({ ...f(1, 0, 1), payload: new Uint8Array(65) })).toThrow(RangeError);
  });

  it("addresses 1 and 247 are accepted; 0, 248, negative and non-integer addresses throw a RangeError", () => {
    expect(encodeFrame(f(1, 0, 1))[1]).toBe(1);
    expect(encodeFrame(f(247, 0, 1))[1]).toBe(247);
    for (const addr of [0, 248, 255, 256, -1, 1.5, Number.NaN]) {
      expect(() => encodeFrame(f(addr, 0, 1)), `addr ${addr}`).toThrow(RangeError);
    }
  });

  it("the sequence number wraps modulo 256", () => {
    expect(encodeFrame(f(1, 256 + 7, 1))[2]).toBe(7);
  });
});

describe("FrameParser examples", () => {
  const a = f(1, 1, 0x01);
  const b = f(2, 9, 0x82, 5, 1, 0, 0, 0);
  const c = f(3, 0, 0x90, 5, 1);

  it("a frame split byte by byte is decoded once its last byte arrives", () => {
    const h = harness();
    const bytes = encodeFrame(b);
    bytes.forEach((byte, i) => {
      h.parser.push(Uint8Array.of(byte));
      expect(h.frames()).toHaveLength(i === bytes.length - 1 ? 1 : 0);
    });
    expect(h.frames().map(plain)).toEqual([plain(b)]);
    expect(h.discards()).toEqual([]);
    expect(h.parser.pending).toBe(0);
  });

  it("several frames in one chunk are all decoded in order", () => {
    const h = harness();
    h.parser.push(concat(encodeFrame(a), encodeFrame(b), encodeFrame(c)));
    expect(h.frames().map(plain)).toEqual([a, b, c].map(plain));
    expect(h.discards()).toEqual([]);
    expect(h.parser.pending).toBe(0);
  });

  it("leading garbage is reported as discarded with reason no_start", () => {
    const h = harness();
    h.parser.push(concat([0xff, 0x00, 0x03, 0x41], encodeFrame(a)));
    expect(h.discards()).toEqual([{ bytes: Uint8Array.of(0xff, 0x00, 0x03, 0x41), reason: "no_start" }]);
    expect(h.frames().map(plain)).toEqual([plain(a)]);
  });

  it("garbage with no start byte is discarded at once, not held", () => {
    const h = harness();
    h.parser.push(Uint8Array.of(0x10, 0x20, 0x03));
    expect(h.discards()).toEqual([{ bytes: Uint8Array.of(0x10, 0x20, 0x03), reason: "no_start" }]);
    expect(h.parser.pending).toBe(0);
  });

  it("a frame with a corrupt CRC is discarded as bad_checksum and the next frame is still decoded", () => {
    const h = harness();
    const bad = encodeFrame(b);
    bad[5 + b.payload.length] = bad[5 + b.payload.length]! ^ 0x01;
    h.parser.push(concat(bad, encodeFrame(c)));
    expect(h.frames().map(plain)).toEqual([plain(c)]);
    expect(h.discards()[0]).toEqual({ bytes: Uint8Array.of(STX), reason: "bad_checksum" });
    // b's address is 2 (= STX), so its remaining bytes hold another start byte: all of them are discarded.
    expect(h.discards().flatMap((d) => [...d.bytes])).toEqual([...bad]);
    expect(h.parser.pending).toBe(0);
  });

  it("a frame with a corrupt payload byte is discarded as bad_checksum", () => {
    const h = harness();
    const bad = encodeFrame(b);
    bad[6] = bad[6]! ^ 0x40;
    h.parser.push(bad);
    expect(h.frames()).toEqual([]);
    expect(h.discards()[0]?.reason).toBe("bad_checksum");
  });

  it("a frame whose last byte is not ETX is discarded as bad_end", () => {
    const h = harness();
    const bad = encodeFrame(a);
    bad[bad.length - 1] = 0x04;
    h.parser.push(concat(bad, encodeFrame(c)));
    expect(h.discards()[0]).toEqual({ bytes: Uint8Array.of(STX), reason: "bad_end" });
    expect(h.frames().map(plain)).toEqual([plain(c)]);
  });

  it("a LEN above 64 is discarded as bad_length without waiting for more bytes", () => {
    const h = harness();
    h.parser.push(Uint8Array.of(STX, 0x01, 0x00, 0x01, 65));
    expect(h.discards()[0]).toEqual({ bytes: Uint8Array.of(STX), reason: "bad_length" });
    expect(h.parser.pending).toBe(0);
    h.parser.push(encodeFrame(a));
    expect(h.frames().map(plain)).toEqual([plain(a)]);
  });

  it("a stray STX before a real frame is dropped and the frame recovered at once (look-ahead resync)", () => {
    // The stray STX reads the frame's CMD (ACK, 6) as its LEN, so it claims 14 bytes while only 9 are there:
    // without the look-ahead the parser would wait for 5 more bytes that a request/reply bus never sends.
    const ack = f(4, 17, 0x06);
    const h = harness();
    h.parser.push(concat([STX], encodeFrame(ack)));
    expect(h.frames().map(plain)).toEqual([plain(ack)]);
    expect(h.discards()).toEqual([{ bytes: Uint8Array.of(STX), reason: "stale_start" }]);
    expect(h.parser.pending).toBe(0);
  });

  it("the look-ahead also recovers the frame when it arrives byte by byte after the stray STX", () => {
    const ack = f(4, 17, 0x06);
    const h = harness();
    for (const byte of concat([0x55, STX], encodeFrame(ack))) h.parser.push(Uint8Array.of(byte));
    expect(h.frames().map(plain)).toEqual([plain(ack)]);
    expect(h.parser.pending).toBe(0);
  });

  it("an incomplete frame is held, not discarded, while its bytes are still arriving", () => {
    const h = harness();
    const bytes = encodeFrame(b);
    h.parser.push(bytes.subarray(0, 7));
    expect(h.parser.pending).toBe(7);
    expect(h.events).toEqual([]);
    h.parser.push(bytes.subarray(7));
    expect(h.frames().map(plain)).toEqual([plain(b)]);
  });

  it("a payload containing STX and ETX bytes decodes correctly", () => {
    const tricky = f(2, 3, 0x05, STX, ETX, STX, STX, ETX, 0x00);
    for (const sizes of [[1], [3], [100]]) {
      const h = harness();
      for (const part of chunk(encodeFrame(tricky), sizes)) h.parser.push(part);
      expect(h.frames().map(plain), `chunks of ${sizes}`).toEqual([plain(tricky)]);
      expect(h.discards()).toEqual([]);
    }
  });

  it("known limitation: a frame whose payload embeds a complete valid frame loses to it when it arrives slowly", () => {
    // The look-ahead prefers a complete valid frame over a candidate still waiting for bytes; a frame that
    // carries another encoded frame inside its payload is, while incomplete, indistinguishable from noise
    // followed by that frame. Real lock-bus payloads are at most 5 bytes and cannot hold an 8-byte frame.
    const inner = f(9, 9, 0x06);
    const outer: Frame = { ...f(1, 1, 0x01), payload: encodeFrame(inner) };
    const slow = harness();
    for (const byte of encodeFrame(outer)) slow.parser.push(Uint8Array.of(byte));
    expect(slow.frames().map(plain)).toEqual([plain(inner)]);
    const fast = harness();
    fast.parser.push(encodeFrame(outer));
    expect(fast.frames().map(plain)).toEqual([plain(outer)]);
  });
});

/** Pushes `chunks`, checking after every push that bytes are conserved and `pending` is a suffix starting at STX. */
function pushChecked(h: ReturnType<typeof harness>, stream: Uint8Array, chunks: Uint8Array[]) {
  let pushed = 0;
  for (const part of chunks) {
    h.parser.push(part);
    pushed += part.length;
    // Every byte is in exactly one place: an emitted frame, a discard report, or pending — and in stream order.
    const consumed = h.events.flatMap((e) => ("frame" in e ? refEncode(e.frame) : [...e.discard.bytes]));
    expect(consumed.length + h.parser.pending).toBe(pushed);
    expect(consumed).toEqual([...stream.subarray(0, consumed.length)]);
    // Held bytes start at a start byte and can never exceed one maximal frame minus a byte.
    if (h.parser.pending > 0) expect(stream[consumed.length]).toBe(STX);
    expect(h.parser.pending).toBeLessThan(FRAME_OVERHEAD + MAX_PAYLOAD);
  }
}

describe("FrameParser properties", () => {
  it("never throws for arbitrary bytes in arbitrary chunks", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 400 }), chunkSizesArb, (stream, sizes) => {
        const h = harness();
        expect(() => {
          for (const part of chunk(stream, sizes)) h.parser.push(part);
        }).not.toThrow();
      }),
      { numRuns: 300 },
    );
  });

  it("conserves bytes: each input byte is in exactly one emitted frame, discard report or pending, in order", () => {
    // STX-heavy random input reaches every branch (bad_length, bad_end, bad_checksum, stale_start, incomplete).
    const streamArb = fc.oneof(
      fc.uint8Array({ maxLength: 300 }),
      fc
        .array(fc.oneof(frameArb.map(refEncode), stxGarbageArb), { maxLength: 8 })
        .map((ps) => Uint8Array.from(ps.flat())),
    );
    fc.assert(
      fc.property(streamArb, chunkSizesArb, (stream, sizes) => {
        const h = harness();
        pushChecked(h, stream, chunk(stream, sizes));
        // Every emitted frame was a valid frame at its place in the stream.
        const starts = validStarts(stream);
        let at = 0;
        for (const e of h.events) {
          if ("frame" in e) expect(starts).toContain(at);
          at += "frame" in e ? frameSize(e.frame) : e.discard.bytes.length;
        }
      }),
      { numRuns: 300 },
    );
  });

  /**
   * Builds garbage₀ frame₁ garbage₁ … frameₙ garbageₙ and returns the stream, the frames that should come out,
   * and the stream offset just after each of them.
   */
  function assemble(
    parts: { garbage: number[]; frame: Frame; corrupt?: (bytes: number[]) => number[] }[],
    tail: number[],
  ) {
    const bytes: number[] = [];
    const expected: { frame: Frame; start: number; end: number }[] = [];
    for (const p of parts) {
      bytes.push(...p.garbage);
      const enc = refEncode(p.frame);
      if (p.corrupt) bytes.push(...p.corrupt(enc));
      else {
        expected.push({ frame: p.frame, start: bytes.length, end: bytes.length + enc.length });
        bytes.push(...enc);
      }
    }
    bytes.push(...tail);
    return { stream: Uint8Array.from(bytes), expected };
  }

  /** Frames come out in order and content, each as soon as its last byte has been pushed. */
  function checkRecovery(stream: Uint8Array, expected: { frame: Frame; end: number }[], sizes: number[]) {
    const h = harness();
    let pushed = 0;
    for (const part of chunk(stream, sizes)) {
      h.parser.push(part);
      pushed += part.length;
      expect(h.frames().length).toBe(expected.filter((e) => e.end <= pushed).length);
    }
    expect(h.frames().map(plain)).toEqual(expected.map((e) => plain(e.frame)));
  }

  it("frames separated by garbage without STX are all recovered in order, whatever the chunking", () => {
    // Precondition: no frame holds a complete valid frame strictly inside it (see the known-limitation
    // example above); random payloads essentially never do, but the property is stated exactly.
    const noEmbedded = (fr: Frame) => {
      const enc = Uint8Array.from(refEncode(fr));
      return validStarts(enc.subarray(0, enc.length - 1)).every((i) => i === 0);
    };
    fc.assert(
      fc.property(
        fc.array(fc.record({ garbage: noStxGarbageArb, frame: frameArb }), { minLength: 1, maxLength: 6 }),
        noStxGarbageArb,
        chunkSizesArb,
        (parts, tail, sizes) => {
          fc.pre(parts.every((p) => noEmbedded(p.frame)));
          const { stream, expected } = assemble(parts, tail);
          checkRecovery(stream, expected, sizes);
        },
      ),
      { numRuns: 300 },
    );
  });

  /*
   * With garbage that may contain STX, nothing can be promised unconditionally: a stray STX plus the garbage
   * after it plus the first bytes of a real frame can happen to form a valid frame (right LEN, ETX and a
   * CRC match), which is then emitted and swallows the real frame's start; no framing without byte
   * stuffing can tell the two apart. What does hold, exactly, is:
   *
   *   If the only positions of the stream at which a complete valid frame starts are the starts of the
   *   intact frames, then every intact frame is emitted, in order and content, as soon as its last byte has
   *   been pushed — whatever the chunking, whatever STX bytes, truncated frames or corrupted frames
   *   surround it, and with no trailing bytes needed.
   *
   * Why: a frame's start byte is never dropped — not as no_start (it is a start byte), not as invalid (its
   * candidate is either incomplete or valid), and not as stale_start (that only drops bytes before the first
   * complete valid frame further on, which, by the precondition, would be a later intact frame, and then
   * this one, lying before it, is complete and valid too). Once its last byte is in, the look-ahead (or the
   * check at offset 0) finds it. The precondition is checked with an independent oracle; random garbage
   * rarely violates it, so few runs are rejected.
   */
  it("intact frames amid STX-laden garbage and corrupted frames are recovered as soon as they are complete", () => {
    const corruptArb: fc.Arbitrary<(bytes: number[]) => number[]> = fc.oneof(
      // flip some bits of one byte (CRC-16 catches every single-byte error)
      fc.tuple(fc.nat(), fc.integer({ min: 1, max: 255 })).map(
        ([at, mask]) =>
          (bytes: number[]) =>
            bytes.map((v, i) => (i === at % bytes.length ? v ^ mask : v)),
      ),
      // lose the tail of the frame
      fc.nat().map((cut) => (bytes: number[]) => bytes.slice(0, cut % bytes.length)),
      // lose one byte in the middle
      fc.nat().map((at) => (bytes: number[]) => bytes.filter((_, i) => i !== at % bytes.length)),
    );
    const partArb = fc.record({
      garbage: stxGarbageArb,
      frame: frameArb,
      corrupt: fc.oneof(
        { weight: 2, arbitrary: fc.constant(undefined) },
        { weight: 1, arbitrary: corruptArb },
      ),
    });
    fc.assert(
      fc.property(
        fc.array(partArb, { minLength: 1, maxLength: 6 }),
        stxGarbageArb,
        chunkSizesArb,
        (parts, tail, sizes) => {
          const { stream, expected } = assemble(parts, tail);
          fc.pre(JSON.stringify(validStarts(stream)) === JSON.stringify(expected.map((e) => e.start)));
          checkRecovery(stream, expected, sizes);
          const h = harness();
          pushChecked(h, stream, chunk(stream, sizes));
        },
      ),
      { numRuns: 500 },
    );
  });
});
