/**
 * Typed meaning of lock-bus frames, one layer above the framing (STYLE rule 3: payload meaning is decoded
 * here, not in the parser). Decoding never throws: a frame that does not fit its command's payload shape
 * decodes to `{ kind: "invalid" }` with the reason.
 */
import {
  ACK,
  type BoardEventKind,
  CMD,
  codeOf,
  EVENT,
  EVENTS,
  FAULT_JAMMED,
  FAULT_TAMPER,
  type LatchResult,
  NAK,
  NAK_REASONS,
  type NakReason,
  REPLY_BIT,
  RESULTS,
} from "./constants.ts";
import type { Frame } from "./frame.ts";

export type LatchState = "locked" | "unlocked";

/** What the host (the gateway) sends. */
export type HostRequest =
  | { kind: "ping"; addr: number; seq: number }
  | { kind: "status"; addr: number; seq: number; channel: number }
  | { kind: "lock"; addr: number; seq: number; channel: number }
  /** holdS: for door locks, seconds before the lock re-engages by itself (0 = stay unlocked). */
  | { kind: "unlock"; addr: number; seq: number; channel: number; holdS: number }
  | { kind: "power"; addr: number; seq: number; channel: number; on: boolean };

export type ChannelStatus = {
  channel: number;
  latch: LatchState;
  itemPresent: boolean;
  doorOpen: boolean;
  jammed: boolean;
  tamper: boolean;
};

/** What a board sends. */
export type BoardMessage =
  | { kind: "ack"; addr: number; seq: number }
  | { kind: "nak"; addr: number; seq: number; reason: NakReason }
  | { kind: "ping_reply"; addr: number; seq: number; firmware: string; channels: number }
  | ({ kind: "status_reply"; addr: number; seq: number } & ChannelStatus)
  | {
      kind: "lock_result" | "unlock_result";
      addr: number;
      seq: number;
      channel: number;
      result: LatchResult;
      latch: LatchState;
    }
  | { kind: "power_result"; addr: number; seq: number; channel: number; on: boolean }
  | { kind: "event"; addr: number; channel: number; event: BoardEventKind };

export type Invalid = { kind: "invalid"; reason: string; frame: Frame };

/** Payload bytes. Refuses values that are not bytes: Uint8Array would wrap 260 to 4 (another channel) or NaN to 0. */
const bytes = (...b: number[]) => {
  for (const v of b)
    if (!Number.isInteger(v) || v < 0 || v > 0xff) throw new RangeError(`payload value ${v} is not a byte`);
  return Uint8Array.from(b);
};

export function hostRequestFrame(r: HostRequest): Frame {
  const head = { addr: r.addr, seq: r.seq };
  switch (r.kind) {
    case "ping":
      return { ...head, cmd: CMD.PING, payload: bytes() };
    case "status":
      return { ...head, cmd: CMD.STATUS, payload: bytes(r.channel) };
    case "lock":
      return { ...head, cmd: CMD.LOCK, payload: bytes(r.channel) };
    case "unlock":
      return {
        ...head,
        cmd: CMD.UNLOCK,
        payload: bytes(r.channel, Math.min(255, Math.max(0, Math.round(r.holdS)))),
      };
    case "power":
      return { ...head, cmd: CMD.POWER, payload: bytes(r.channel, r.on ? 1 : 0) };
  }
}

export function decodeHostRequest(f: Frame): HostRequest | Invalid {
  const p = f.payload;
  const head = { addr: f.addr, seq: f.seq };
  const need = (n: number) =>
    p.length === n
      ? null
      : ({ kind: "invalid", reason: `payload of ${p.length} bytes, expected ${n}`, frame: f } as Invalid);
  switch (f.cmd) {
    case CMD.PING:
      return need(0) ?? { kind: "ping", ...head };
    case CMD.STATUS:
      return need(1) ?? { kind: "status", ...head, channel: p[0] as number };
    case CMD.LOCK:
      return need(1) ?? { kind: "lock", ...head, channel: p[0] as number };
    case CMD.UNLOCK:
      return need(2) ?? { kind: "unlock", ...head, channel: p[0] as number, holdS: p[1] as number };
    case CMD.POWER:
      return need(2) ?? { kind: "power", ...head, channel: p[0] as number, on: p[1] === 1 };
    default:
      return { kind: "invalid", reason: `unknown command 0x${f.cmd.toString(16)}`, frame: f };
  }
}

const latchByte = (l: LatchState) => (l === "locked" ? 1 : 0);
const latchOf = (b: number | undefined): LatchState => (b === 1 ? "locked" : "unlocked");

export function boardMessageFrame(m: BoardMessage): Frame {
  switch (m.kind) {
    case "ack":
      return { addr: m.addr, seq: m.seq, cmd: ACK, payload: bytes() };
    case "nak":
      return { addr: m.addr, seq: m.seq, cmd: NAK, payload: bytes(codeOf(NAK_REASONS, m.reason)) };
    case "ping_reply": {
      const [major = 0, minor = 0] = m.firmware.split(".").map(Number);
      return {
        addr: m.addr,
        seq: m.seq,
        cmd: CMD.PING | REPLY_BIT,
        payload: bytes(major, minor, m.channels),
      };
    }
    case "status_reply":
      return {
        addr: m.addr,
        seq: m.seq,
        cmd: CMD.STATUS | REPLY_BIT,
        payload: bytes(
          m.channel,
          latchByte(m.latch),
          m.itemPresent ? 1 : 0,
          m.doorOpen ? 1 : 0,
          (m.jammed ? FAULT_JAMMED : 0) | (m.tamper ? FAULT_TAMPER : 0),
        ),
      };
    case "lock_result":
    case "unlock_result":
      return {
        addr: m.addr,
        seq: m.seq,
        cmd: (m.kind === "lock_result" ? CMD.LOCK : CMD.UNLOCK) | REPLY_BIT,
        payload: bytes(m.channel, codeOf(RESULTS, m.result), latchByte(m.latch)),
      };
    case "power_result":
      return {
        addr: m.addr,
        seq: m.seq,
        cmd: CMD.POWER | REPLY_BIT,
        payload: bytes(m.channel, m.on ? 1 : 0),
      };
    case "event":
      return { addr: m.addr, seq: 0, cmd: EVENT, payload: bytes(m.channel, codeOf(EVENTS, m.event)) };
  }
}

export function decodeBoardMessage(f: Frame): BoardMessage | Invalid {
  const p = f.payload;
  const head = { addr: f.addr, seq: f.seq };
  const bad = (reason: string): Invalid => ({ kind: "invalid", reason, frame: f });
  const need = (n: number) => (p.length === n ? null : bad(`payload of ${p.length} bytes, expected ${n}`));
  switch (f.cmd) {
    case ACK:
      return need(0) ?? { kind: "ack", ...head };
    case NAK: {
      const reason = NAK_REASONS[p[0] as keyof typeof NAK_REASONS];
      return need(1) ?? (reason ? { kind: "nak", ...head, reason } : bad(`unknown NAK reason ${p[0]}`));
    }
    case CMD.PING | REPLY_BIT:
      return (
        need(3) ?? { kind: "ping_reply", ...head, firmware: `${p[0]}.${p[1]}`, channels: p[2] as number }
      );
    case CMD.STATUS | REPLY_BIT:
      return (
        need(5) ?? {
          kind: "status_reply",
          ...head,
          channel: p[0] as number,
          latch: latchOf(p[1]),
          itemPresent: p[2] === 1,
          doorOpen: p[3] === 1,
          jammed: ((p[4] as number) & FAULT_JAMMED) !== 0,
          tamper: ((p[4] as number) & FAULT_TAMPER) !== 0,
        }
      );
    case CMD.LOCK | REPLY_BIT:
    case CMD.UNLOCK | REPLY_BIT: {
      const result = RESULTS[p[1] as keyof typeof RESULTS];
      if (p.length !== 3) return bad(`payload of ${p.length} bytes, expected 3`);
      if (!result) return bad(`unknown result ${p[1]}`);
      return {
        kind: f.cmd === (CMD.LOCK | REPLY_BIT) ? "lock_result" : "unlock_result",
        ...head,
        channel: p[0] as number,
        result,
        latch: latchOf(p[2]),
      };
    }
    case CMD.POWER | REPLY_BIT:
      return need(2) ?? { kind: "power_result", ...head, channel: p[0] as number, on: p[1] === 1 };
    case EVENT: {
      const event = EVENTS[p[1] as keyof typeof EVENTS];
      if (p.length !== 2) return bad(`payload of ${p.length} bytes, expected 2`);
      return event
        ? { kind: "event", addr: f.addr, channel: p[0] as number, event }
        : bad(`unknown event ${p[1]}`);
    }
    default:
      return bad(`unknown command 0x${f.cmd.toString(16)}`);
  }
}
