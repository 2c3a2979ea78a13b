/**
 * What a lock board's firmware and its behaviours see of the board: its identity, the mechanical state of
 * its channels, and how it talks and waits. `LockBoard` implements it; `BoardFirmware` and the behaviours
 * depend on this alone, so neither imports the board (nor the board them, beyond construction).
 */
import type { BoardMessage, LatchState } from "../shared/protocol/lock-bus/messages.ts";

/** A door lock honours UNLOCK's hold time; a locker or dock latch stays where it was put. */
export type ChannelKind = "locker" | "door";

export type ChannelState = {
  kind: ChannelKind;
  latch: LatchState;
  itemPresent: boolean;
  doorOpen: boolean;
  jammed: boolean;
  tamper: boolean;
  powered: boolean;
};

export type BoardEventName = Extract<BoardMessage, { kind: "event" }>["event"];

export interface BoardHardware {
  readonly address: number;
  /** "major.minor". */
  readonly firmware: string;
  readonly channelCount: number;
  /** How long a latch takes to move; 0 = instant. */
  readonly moveMs: number;
  /** The live state of channel n (1-based); throws for a channel the board does not have. */
  channel(n: number): ChannelState;
  /** Sends a message (through the behaviours' `onSend` hooks) after `delayMs`. */
  send(msg: BoardMessage, delayMs?: number): void;
  /** Sends an unsolicited EVENT for a channel. */
  event(channel: number, event: BoardEventName): void;
  /** Runs fn after ms on the board's timers (cancelled by a power loss); returns a cancel. */
  after(ms: number, fn: () => void): () => void;
  /** Jams (or frees) a latch. */
  setJammed(channel: number, on: boolean): void;
  /** Power loss: everything pending is forgotten. */
  reset(): void;
}
