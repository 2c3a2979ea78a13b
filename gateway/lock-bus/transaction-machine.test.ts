import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { EVENTS, NAK_REASONS, RESULTS } from "../../shared/protocol/lock-bus/constants.ts";
import type { BoardMessage } from "../../shared/protocol/lock-bus/messages.ts";
import {
  describeFailure,
  isSettled,
  stepTransaction,
  type TxExpectation,
  type TxFailure,
  type TxInput,
  type TxState,
} from "./transaction-machine.ts";

const EXPECT: TxExpectation = { addr: 7, seq: 42, replyKind: "lock_result" };
const head = { addr: EXPECT.addr, seq: EXPECT.seq };
const ack: BoardMessage = { kind: "ack", ...head };
const reply: BoardMessage = {
  kind: "lock_result",
  ...head,
  channel: 3,
  result: "ok",
  latch: "locked",
};
const msg = (m: BoardMessage): TxInput => ({ kind: "message", msg: m });

const AWAITING_ACK: TxState = { phase: "awaiting_ack" };
const AWAITING_REPLY: TxState = { phase: "awaiting_reply" };

/** Feeds inputs in order from awaiting_ack. */
const run = (inputs: TxInput[], from: TxState = AWAITING_ACK, expect = EXPECT) =>
  inputs.reduce((s, i) => stepTransaction(s, i, expect), from);

// ---- arbitraries ----

const nakReason = fc.constantFrom(...Object.values(NAK_REASONS));
const addr = fc.integer({ min: 1, max: 247 });
const seq = fc.integer({ min: 0, max: 255 });
const latch = fc.constantFrom("locked" as const, "unlocked" as const);

/** Any board message, with addr/seq drawn from the given arbitraries (so tests can bias them). */
function boardMessage(a: fc.Arbitrary<number>, s: fc.Arbitrary<number>): fc.Arbitrary<BoardMessage> {
  return fc.oneof(
    fc.record({ kind: fc.constant("ack" as const), addr: a, seq: s }),
    fc.record({ kind: fc.constant("nak" as const), addr: a, seq: s, reason: nakReason }),
    fc.record({
      kind: fc.constant("ping_reply" as const),
      addr: a,
      seq: s,
      firmware: fc.constant("1.0"),
      channels: fc.integer({ min: 1, max: 64 }),
    }),
    fc.record({
      kind: fc.constant("status_reply" as const),
      addr: a,
      seq: s,
      channel: fc.integer({ min: 1, max: 64 }),
      latch,
      itemPresent: fc.boolean(),
      doorOpen: fc.boolean(),
      jammed: fc.boolean(),
      tamper: fc.boolean(),
    }),
    fc.record({
      kind: fc.constantFrom("lock_result" as const, "unlock_result" as const),
      addr: a,
      seq: s,
      channel: fc.integer({ min: 1, max: 64 }),
      result: fc.constantFrom(...Object.values(RESULTS)),
      latch,
    }),
    fc.record({
      kind: fc.constant("power_result" as const),
      addr: a,
      seq: s,
      channel: fc.integer({ min: 1, max: 64 }),
      on: fc.boolean(),
    }),
    fc.record({
      kind: fc.constant("event" as const),
      addr: a,
      channel: fc.integer({ min: 0, max: 64 }),
      event: fc.constantFrom(...Object.values(EVENTS)),
    }),
  );
}

/** Messages biased towards the expected addr/seq so that interesting transitions actually happen. */
const anyMessage = boardMessage(
  fc.oneof(fc.constant(EXPECT.addr), addr),
  fc.oneof(fc.constant(EXPECT.seq), seq),
);

const anyInput: fc.Arbitrary<TxInput> = fc.oneof(
  { weight: 6, arbitrary: anyMessage.map(msg) },
  { weight: 1, arbitrary: fc.constant({ kind: "timeout" } as TxInput) },
  { weight: 1, arbitrary: fc.constant({ kind: "closed" } as TxInput) },
);

const failure: fc.Arbitrary<TxFailure> = fc.oneof(
  fc.constant({ reason: "no_ack" } as TxFailure),
  fc.constant({ reason: "no_reply" } as TxFailure),
  fc.constant({ reason: "link_closed" } as TxFailure),
  nakReason.map((nak): TxFailure => ({ reason: "nak", nak })),
);

const settledState: fc.Arbitrary<TxState> = fc.oneof(
  anyMessage.map((m): TxState => ({ phase: "done", reply: m })),
  failure.map((f): TxState => ({ phase: "failed", failure: f })),
);

const openState = fc.constantFrom<TxState>(AWAITING_ACK, AWAITING_REPLY);

/** Messages that are not for this transaction: another board, another seq, or an event. */
const foreignMessage = fc.oneof(
  boardMessage(
    addr.filter((a) => a !== EXPECT.addr),
    seq,
  ),
  boardMessage(
    addr,
    seq.filter((s) => s !== EXPECT.seq),
  ),
  boardMessage(fc.constant(EXPECT.addr), fc.constant(EXPECT.seq)).filter((m) => m.kind === "event"),
);

describe("stepTransaction: the ordinary exchange", () => {
  it("an ACK moves awaiting_ack to awaiting_reply, and the reply then settles it as done", () => {
    const afterAck = run([msg(ack)]);
    expect(afterAck).toEqual({ phase: "awaiting_reply" });
    expect(run([msg(reply)], afterAck)).toEqual({ phase: "done", reply });
  });

  it("a reply whose ACK was lost settles the transaction as done straight from awaiting_ack", () => {
    expect(run([msg(reply)])).toEqual({ phase: "done", reply });
  });

  it("a second ACK while awaiting the reply changes nothing", () => {
    expect(run([msg(ack), msg(ack)])).toEqual({ phase: "awaiting_reply" });
  });

  it("a reply of another kind with the right addr and seq is not taken as the answer", () => {
    const wrongKind: BoardMessage = {
      kind: "unlock_result",
      ...head,
      channel: 3,
      result: "ok",
      latch: "unlocked",
    };
    expect(run([msg(wrongKind)])).toEqual(AWAITING_ACK);
    expect(run([msg(ack), msg(wrongKind)])).toEqual(AWAITING_REPLY);
  });
});

describe("stepTransaction: failures", () => {
  it("a NAK fails the transaction with the board's reason, before or after the ACK", () => {
    for (const reason of Object.values(NAK_REASONS)) {
      const nak: BoardMessage = { kind: "nak", ...head, reason };
      expect(run([msg(nak)])).toEqual({ phase: "failed", failure: { reason: "nak", nak: reason } });
      expect(run([msg(ack), msg(nak)])).toEqual({ phase: "failed", failure: { reason: "nak", nak: reason } });
    }
  });

  it("a timeout while awaiting the ACK fails with no_ack", () => {
    expect(run([{ kind: "timeout" }])).toEqual({ phase: "failed", failure: { reason: "no_ack" } });
  });

  it("a timeout while awaiting the reply fails with no_reply", () => {
    expect(run([msg(ack), { kind: "timeout" }])).toEqual({
      phase: "failed",
      failure: { reason: "no_reply" },
    });
  });

  it("the link closing fails the transaction with link_closed in either open phase", () => {
    expect(run([{ kind: "closed" }])).toEqual({ phase: "failed", failure: { reason: "link_closed" } });
    expect(run([msg(ack), { kind: "closed" }])).toEqual({
      phase: "failed",
      failure: { reason: "link_closed" },
    });
  });
});

describe("stepTransaction: properties", () => {
  it("messages for another board or seq, and board events, never change an open state", () => {
    fc.assert(
      fc.property(openState, foreignMessage, (s, m) => {
        expect(stepTransaction(s, msg(m), EXPECT)).toBe(s);
      }),
    );
  });

  it("a settled state never changes, whatever arrives afterwards", () => {
    fc.assert(
      fc.property(settledState, fc.array(anyInput, { maxLength: 20 }), (s, inputs) => {
        expect(run(inputs, s)).toBe(s);
      }),
    );
  });

  it("once any input sequence settles the transaction, later inputs leave it exactly as it settled", () => {
    fc.assert(
      fc.property(fc.array(anyInput, { maxLength: 30 }), (inputs) => {
        let s: TxState = AWAITING_ACK;
        let settledAt: TxState | null = null;
        for (const i of inputs) {
          s = stepTransaction(s, i, EXPECT);
          if (settledAt) expect(s).toBe(settledAt);
          else if (isSettled(s)) settledAt = s;
        }
      }),
    );
  });

  it("never goes back to awaiting_ack, and reaches done only with the expected reply", () => {
    fc.assert(
      fc.property(fc.array(anyInput, { maxLength: 30 }), (inputs) => {
        let s: TxState = AWAITING_ACK;
        for (const i of inputs) {
          const next = stepTransaction(s, i, EXPECT);
          if (s.phase !== "awaiting_ack") expect(next.phase).not.toBe("awaiting_ack");
          if (next.phase === "done" && s.phase !== "done") {
            expect(next.reply.kind).toBe(EXPECT.replyKind);
            expect(next.reply).toMatchObject({ addr: EXPECT.addr, seq: EXPECT.seq });
          }
          s = next;
        }
      }),
    );
  });

  it("a timeout or a closed link always settles an open transaction", () => {
    fc.assert(
      fc.property(openState, fc.constantFrom<TxInput>({ kind: "timeout" }, { kind: "closed" }), (s, i) => {
        expect(isSettled(stepTransaction(s, i, EXPECT))).toBe(true);
      }),
    );
  });
});

describe("isSettled", () => {
  it("is true for done and failed only", () => {
    expect(isSettled(AWAITING_ACK)).toBe(false);
    expect(isSettled(AWAITING_REPLY)).toBe(false);
    expect(isSettled({ phase: "done", reply })).toBe(true);
    expect(isSettled({ phase: "failed", failure: { reason: "no_ack" } })).toBe(true);
  });
});

describe("describeFailure", () => {
  it("gives one distinct sentence per failure, naming the board where it concerns one", () => {
    const sentences = {
      no_ack: describeFailure({ reason: "no_ack" }, 4),
      no_reply: describeFailure({ reason: "no_reply" }, 4),
      nak: describeFailure({ reason: "nak", nak: "busy" }, 4),
      link_closed: describeFailure({ reason: "link_closed" }, 4),
    };
    expect(sentences.no_ack).toBe("lock board 4 did not answer");
    expect(sentences.no_reply).toBe("lock board 4 acknowledged but did not report the result");
    expect(sentences.nak).toBe("lock board 4 refused the request (busy)");
    expect(sentences.link_closed).toBe("the serial line to the lock boards is down");
    expect(new Set(Object.values(sentences)).size).toBe(4);
  });

  it("returns a non-empty sentence for every failure and includes the NAK reason", () => {
    fc.assert(
      fc.property(failure, addr, (f, board) => {
        const s = describeFailure(f, board);
        expect(s.length).toBeGreaterThan(0);
        if (f.reason === "nak") expect(s).toContain(f.nak);
        if (f.reason !== "link_closed") expect(s).toContain(`lock board ${board}`);
      }),
    );
  });
});
