import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ACK, CMD, EVENT, EVENTS, NAK, NAK_REASONS, REPLY_BIT, RESULTS } from "./constants.ts";
import { encodeFrame, type Frame } from "./frame.ts";
import { FrameParser } from "./frame-parser.ts";
import {
  type BoardMessage,
  boardMessageFrame,
  decodeBoardMessage,
  decodeHostRequest,
  type HostRequest,
  hostRequestFrame,
} from "./messages.ts";

/** Frame → bytes → FrameParser → Frame, as on the wire. */
function overTheWire(frame: Frame): Frame {
  const out: Frame[] = [];
  const parser = new FrameParser((f) => out.push(f));
  parser.push(encodeFrame(frame));
  expect(out).toHaveLength(1);
  expect(parser.pending).toBe(0);
  return out[0]!;
}

const frame = (cmd: number, ...payload: number[]): Frame => ({
  addr: 1,
  seq: 7,
  cmd,
  payload: Uint8Array.from(payload),
});

const addr = fc.integer({ min: 1, max: 247 });
const seq = fc.integer({ min: 0, max: 255 });
const channel = fc.integer({ min: 1, max: 64 });
const byte = fc.integer({ min: 0, max: 255 });
const latch = fc.constantFrom("locked" as const, "unlocked" as const);
const values = <T extends Record<number, string>>(t: T) => Object.values(t) as T[keyof T][];

const hostRequestArbs: Record<HostRequest["kind"], fc.Arbitrary<HostRequest>> = {
  ping: fc.record({ kind: fc.constant("ping" as const), addr, seq }),
  status: fc.record({ kind: fc.constant("status" as const), addr, seq, channel }),
  lock: fc.record({ kind: fc.constant("lock" as const), addr, seq, channel }),
  unlock: fc.record({ kind: fc.constant("unlock" as const), addr, seq, channel, holdS: byte }),
  power: fc.record({ kind: fc.constant("power" as const), addr, seq, channel, on: fc.boolean() }),
};

const boardMessageArbs: Record<BoardMessage["kind"], fc.Arbitrary<BoardMessage>> = {
  ack: fc.record({ kind: fc.constant("ack" as const), addr, seq }),
  nak: fc.record({
    kind: fc.constant("nak" as const),
    addr,
    seq,
    reason: fc.constantFrom(...values(NAK_REASONS)),
  }),
  ping_reply: fc.record({
    kind: fc.constant("ping_reply" as const),
    addr,
    seq,
    firmware: fc.tuple(byte, byte).map(([major, minor]) => `${major}.${minor}`),
    channels: byte,
  }),
  status_reply: fc.record({
    kind: fc.constant("status_reply" as const),
    addr,
    seq,
    channel,
    latch,
    itemPresent: fc.boolean(),
    doorOpen: fc.boolean(),
    jammed: fc.boolean(),
    tamper: fc.boolean(),
  }),
  lock_result: fc.record({
    kind: fc.constant("lock_result" as const),
    addr,
    seq,
    channel,
    result: fc.constantFrom(...values(RESULTS)),
    latch,
  }),
  unlock_result: fc.record({
    kind: fc.constant("unlock_result" as const),
    addr,
    seq,
    channel,
    result: fc.constantFrom(...values(RESULTS)),
    latch,
  }),
  power_result: fc.record({
    kind: fc.constant("power_result" as const),
    addr,
    seq,
    channel,
    on: fc.boolean(),
  }),
  // Events carry no SEQ of their own (always 0 on the wire); channel 0 is used by "reset".
  event: fc.record({
    kind: fc.constant("event" as const),
    addr,
    channel: fc.integer({ min: 0, max: 64 }),
    event: fc.constantFrom(...values(EVENTS)),
  }),
};

describe("host requests", () => {
  for (const [kind, arb] of Object.entries(hostRequestArbs)) {
    it(`a ${kind} request survives frame, encoding, parsing and decoding unchanged`, () => {
      fc.assert(
        fc.property(arb, (r) => {
          expect(decodeHostRequest(overTheWire(hostRequestFrame(r)))).toEqual(r);
        }),
      );
    });
  }

  it("requests use the documented command codes and payloads", () => {
    expect(hostRequestFrame({ kind: "ping", addr: 3, seq: 1 })).toEqual({
      addr: 3,
      seq: 1,
      cmd: 0x01,
      payload: Uint8Array.of(),
    });
    expect(hostRequestFrame({ kind: "status", addr: 3, seq: 1, channel: 9 }).payload).toEqual(
      Uint8Array.of(9),
    );
    expect(hostRequestFrame({ kind: "lock", addr: 3, seq: 1, channel: 9 }).cmd).toBe(0x03);
    expect(hostRequestFrame({ kind: "unlock", addr: 3, seq: 1, channel: 9, holdS: 5 })).toMatchObject({
      cmd: 0x04,
      payload: Uint8Array.of(9, 5),
    });
    expect(hostRequestFrame({ kind: "power", addr: 3, seq: 1, channel: 9, on: true })).toMatchObject({
      cmd: 0x05,
      payload: Uint8Array.of(9, 1),
    });
  });

  it("holdS is rounded and clamped to 0–255", () => {
    const hold = (holdS: number) =>
      hostRequestFrame({ kind: "unlock", addr: 1, seq: 0, channel: 2, holdS }).payload[1];
    expect(hold(-5)).toBe(0);
    expect(hold(300)).toBe(255);
    expect(hold(Number.POSITIVE_INFINITY)).toBe(255);
    expect(hold(Number.NEGATIVE_INFINITY)).toBe(0);
    expect(hold(2.4)).toBe(2);
    expect(hold(2.6)).toBe(3);
    fc.assert(
      fc.property(fc.double({ noNaN: true }), (holdS) => {
        expect(hold(holdS)).toBe(Math.min(255, Math.max(0, Math.round(holdS))));
      }),
    );
  });

  it("a NaN holdS throws instead of becoming 0 (stay unlocked)", () => {
    expect(() =>
      hostRequestFrame({ kind: "unlock", addr: 1, seq: 0, channel: 2, holdS: Number.NaN }),
    ).toThrow(RangeError);
  });

  it("a channel that does not fit in a byte throws instead of wrapping to another channel", () => {
    for (const ch of [256, 260, -1, 1.5, Number.NaN]) {
      expect(
        () => hostRequestFrame({ kind: "unlock", addr: 1, seq: 0, channel: ch, holdS: 0 }),
        `channel ${ch}`,
      ).toThrow(RangeError);
      expect(
        () => hostRequestFrame({ kind: "status", addr: 1, seq: 0, channel: ch }),
        `channel ${ch}`,
      ).toThrow(RangeError);
    }
  });

  it("a wrong payload length decodes to invalid with the reason", () => {
    const cases: [number, number][] = [
      [CMD.PING, 1],
      [CMD.STATUS, 0],
      [CMD.STATUS, 2],
      [CMD.LOCK, 0],
      [CMD.UNLOCK, 1],
      [CMD.UNLOCK, 3],
      [CMD.POWER, 1],
    ];
    for (const [cmd, len] of cases) {
      const f = frame(cmd, ...new Array<number>(len).fill(1));
      expect(decodeHostRequest(f)).toEqual({
        kind: "invalid",
        reason: expect.stringMatching(`payload of ${len} bytes`),
        frame: f,
      });
    }
  });

  it("an unknown command decodes to invalid with the command in the reason", () => {
    for (const cmd of [0x00, 0x06, 0x81, EVENT, 0xff]) {
      const f = frame(cmd);
      expect(decodeHostRequest(f)).toEqual({
        kind: "invalid",
        reason: `unknown command 0x${cmd.toString(16)}`,
        frame: f,
      });
    }
  });

  it("a power byte other than 1 decodes as off", () => {
    expect(decodeHostRequest(frame(CMD.POWER, 3, 0))).toMatchObject({ kind: "power", on: false });
    expect(decodeHostRequest(frame(CMD.POWER, 3, 2))).toMatchObject({ kind: "power", on: false });
  });
});

describe("board messages", () => {
  for (const [kind, arb] of Object.entries(boardMessageArbs)) {
    it(`a ${kind} message survives frame, encoding, parsing and decoding unchanged`, () => {
      fc.assert(
        fc.property(arb, (m) => {
          expect(decodeBoardMessage(overTheWire(boardMessageFrame(m)))).toEqual(m);
        }),
      );
    });
  }

  it("replies carry CMD | 0x80 and the request's SEQ; events carry SEQ 0", () => {
    expect(boardMessageFrame({ kind: "power_result", addr: 2, seq: 42, channel: 1, on: true })).toMatchObject(
      {
        seq: 42,
        cmd: CMD.POWER | REPLY_BIT,
      },
    );
    expect(boardMessageFrame({ kind: "event", addr: 2, channel: 0, event: "reset" })).toEqual({
      addr: 2,
      seq: 0,
      cmd: EVENT,
      payload: Uint8Array.of(0, 7),
    });
  });

  it("STATUS fault bits: bit 0 jammed, bit 1 tamper", () => {
    const status = (faults: number) => decodeBoardMessage(frame(CMD.STATUS | REPLY_BIT, 4, 1, 1, 0, faults));
    expect(status(0)).toMatchObject({
      latch: "locked",
      itemPresent: true,
      doorOpen: false,
      jammed: false,
      tamper: false,
    });
    expect(status(1)).toMatchObject({ jammed: true, tamper: false });
    expect(status(2)).toMatchObject({ jammed: false, tamper: true });
    expect(status(3)).toMatchObject({ jammed: true, tamper: true });
  });

  it("a wrong payload length decodes to invalid with the reason", () => {
    const cases: [number, number][] = [
      [ACK, 1],
      [NAK, 0],
      [NAK, 2],
      [CMD.PING | REPLY_BIT, 2],
      [CMD.STATUS | REPLY_BIT, 4],
      [CMD.LOCK | REPLY_BIT, 2],
      [CMD.UNLOCK | REPLY_BIT, 4],
      [CMD.POWER | REPLY_BIT, 0],
      [EVENT, 3],
      [EVENT, 0],
    ];
    for (const [cmd, len] of cases) {
      const f = frame(cmd, ...new Array<number>(len).fill(1));
      expect(decodeBoardMessage(f), `cmd 0x${cmd.toString(16)} len ${len}`).toEqual({
        kind: "invalid",
        reason: expect.stringMatching(`payload of ${len} bytes`),
        frame: f,
      });
    }
  });

  it("unknown commands, NAK reasons, results and event kinds decode to invalid with the reason", () => {
    const invalid = (f: Frame, reason: string) =>
      expect(decodeBoardMessage(f)).toEqual({ kind: "invalid", reason, frame: f });
    invalid(frame(CMD.UNLOCK), "unknown command 0x4"); // a request is not a board message
    invalid(frame(0x86), "unknown command 0x86");
    invalid(frame(0x91, 1, 1), "unknown command 0x91");
    invalid(frame(NAK, 0), "unknown NAK reason 0");
    invalid(frame(NAK, 5), "unknown NAK reason 5");
    invalid(frame(CMD.LOCK | REPLY_BIT, 1, 5, 1), "unknown result 5");
    invalid(frame(CMD.UNLOCK | REPLY_BIT, 1, 255, 0), "unknown result 255");
    invalid(frame(EVENT, 1, 0), "unknown event 0");
    invalid(frame(EVENT, 1, 13), "unknown event 13");
  });
});

describe("decoding arbitrary frames", () => {
  const anyFrame: fc.Arbitrary<Frame> = fc.record({
    addr,
    seq,
    cmd: fc.oneof(
      fc.constantFrom(
        ...Object.values(CMD),
        ACK,
        NAK,
        EVENT,
        ...Object.values(CMD).map((c) => c | REPLY_BIT),
      ),
      byte,
    ),
    payload: fc.uint8Array({ maxLength: 8 }),
  });

  it("never throws and yields a known kind or invalid with a reason and the frame", () => {
    fc.assert(
      fc.property(anyFrame, (f) => {
        for (const decoded of [decodeHostRequest(f), decodeBoardMessage(f)]) {
          if (decoded.kind === "invalid") {
            expect(decoded.reason).not.toBe("");
            expect(decoded.frame).toBe(f);
          } else {
            expect(decoded.addr).toBe(f.addr);
          }
        }
      }),
      { numRuns: 1000 },
    );
  });

  it("a board message that decodes re-encodes to a frame that decodes to the same message", () => {
    fc.assert(
      fc.property(anyFrame, (f) => {
        const m = decodeBoardMessage(f);
        if (m.kind !== "invalid") expect(decodeBoardMessage(boardMessageFrame(m))).toEqual(m);
        const r = decodeHostRequest(f);
        if (r.kind !== "invalid") expect(decodeHostRequest(hostRequestFrame(r))).toEqual(r);
      }),
      { numRuns: 1000 },
    );
  });
});
