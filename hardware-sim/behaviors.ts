/**
 * Prepend-to-override behaviours for a simulated lock board (STYLE rule 5, the zwave-js MockController
 * idea): the board's built-in firmware answers every request unless a behaviour installed with
 * `board.use()` says it handled it. The newest behaviour runs first, so a test can layer a fault over a
 * preset without unpicking it.
 */
import type { BoardMessage, HostRequest } from "../shared/protocol/lock-bus/messages.ts";
import type { BoardHardware } from "./board-hardware.ts";

/** Something the board is about to put on the wire; `msg` is null for raw bytes. */
export type Outgoing = { msg: BoardMessage | null; bytes: Uint8Array; delayMs: number };

export interface BehaviorContext {
  /** The board and its mechanical state (`board.channel(n)`). */
  readonly board: BoardHardware;
  /** Sends a message through every behaviour's `onSend`, after `delayMs`. */
  send(msg: BoardMessage, delayMs?: number): void;
  /** Puts bytes on the wire as they are, past every `onSend`. */
  sendRaw(bytes: Uint8Array): void;
  /** Runs fn after ms on the board's timers (cancelled by a brownout or close); returns a cancel. */
  after(ms: number, fn: () => void): () => void;
  /** Hands the request on to the behaviours after this one and then the built-in firmware. */
  proceed(req: HostRequest): void;
  /** Uninstalls this behaviour. */
  remove(): void;
}

export interface Behavior {
  readonly name: string;
  /** Called once by `board.use()`, e.g. to put a channel into a fault state at once. */
  onInstall?(ctx: BehaviorContext): void;
  /** Return "handled" to stop the request here (nothing else answers it). */
  onHostRequest?(req: HostRequest, ctx: BehaviorContext): "handled" | undefined;
  /** Rewrites, delays (`delayMs`) or drops (null) what the board sends. */
  onSend?(out: Outgoing, ctx: BehaviorContext): Outgoing | null;
}

/** Identity helper that keeps a behaviour literal checked against the interface. */
export function defineBehavior<B extends Behavior>(b: B): B {
  return b;
}

/** True for a reply to a request (not the ACK/NAK, not an unsolicited event). */
export function isReply(msg: BoardMessage | null): boolean {
  return msg !== null && msg.kind !== "ack" && msg.kind !== "nak" && msg.kind !== "event";
}
