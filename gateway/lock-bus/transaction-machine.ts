/**
 * One request/reply transaction on the lock bus, as a pure state machine (STYLE rule 1): the driver
 * feeds what the wire and the timers say; failures are data, mapped to errors in one place.
 *   awaiting_ack → awaiting_reply → done | failed(reason)
 */
import type { NakReason } from "../../shared/protocol/lock-bus/constants.ts";
import type { BoardMessage } from "../../shared/protocol/lock-bus/messages.ts";

export type TxFailure =
  | { reason: "no_ack" }
  | { reason: "no_reply" }
  | { reason: "nak"; nak: NakReason }
  | { reason: "link_closed" }
  /** Not sent: when its turn on the bus came, whoever asked no longer wanted it (a deadline passed). */
  | { reason: "withdrawn" };

export type TxState =
  | { phase: "awaiting_ack" }
  | { phase: "awaiting_reply" }
  | { phase: "done"; reply: BoardMessage }
  | { phase: "failed"; failure: TxFailure };

export type TxInput = { kind: "message"; msg: BoardMessage } | { kind: "timeout" } | { kind: "closed" };

export type TxExpectation = { addr: number; seq: number; replyKind: BoardMessage["kind"] };

export function isSettled(s: TxState): s is Extract<TxState, { phase: "done" | "failed" }> {
  return s.phase === "done" || s.phase === "failed";
}

export function stepTransaction(s: TxState, input: TxInput, expect: TxExpectation): TxState {
  if (isSettled(s)) return s;
  switch (input.kind) {
    case "closed":
      return { phase: "failed", failure: { reason: "link_closed" } };
    case "timeout":
      return { phase: "failed", failure: { reason: s.phase === "awaiting_ack" ? "no_ack" : "no_reply" } };
    case "message": {
      const m = input.msg;
      // Events and other boards' traffic are not ours; a stale seq is an answer to an earlier request.
      if (m.kind === "event" || m.addr !== expect.addr || m.seq !== expect.seq) return s;
      if (m.kind === "ack") return s.phase === "awaiting_ack" ? { phase: "awaiting_reply" } : s;
      if (m.kind === "nak") return { phase: "failed", failure: { reason: "nak", nak: m.reason } };
      // A reply whose ACK was lost still settles the transaction.
      if (m.kind === expect.replyKind) return { phase: "done", reply: m };
      return s;
    }
  }
}

/** One switch from failure to a sentence a technician or an integrator can act on. */
export function describeFailure(f: TxFailure, board: number): string {
  switch (f.reason) {
    case "no_ack":
      return `lock board ${board} did not answer`;
    case "no_reply":
      return `lock board ${board} acknowledged but did not report the result`;
    case "nak":
      return `lock board ${board} refused the request (${f.nak})`;
    case "link_closed":
      return "the serial line to the lock boards is down";
    case "withdrawn":
      return `not sent to lock board ${board}: its deadline passed while it waited for the bus`;
  }
}
