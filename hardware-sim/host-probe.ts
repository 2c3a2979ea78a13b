/**
 * A bare lock-bus host for poking the simulator (tests, or a REPL against a pty): it writes encoded host
 * frames and decodes what comes back with the same shared parser the gateway uses, keeping every
 * discard and undecodable frame so a test can assert on line noise too. Not a gateway: no retries, no
 * transaction state.
 */
import type { Duplex } from "node:stream";
import { encodeFrame } from "../shared/protocol/lock-bus/frame.ts";
import { type Discarded, FrameParser } from "../shared/protocol/lock-bus/frame-parser.ts";
import {
  type BoardMessage,
  decodeBoardMessage,
  type HostRequest,
  hostRequestFrame,
  type Invalid,
} from "../shared/protocol/lock-bus/messages.ts";

export class HostProbe {
  /** Every decoded board message, in arrival order. */
  readonly messages: BoardMessage[] = [];
  readonly invalid: Invalid[] = [];
  readonly discards: Discarded[] = [];
  private readonly parser: FrameParser;
  private readonly taken = new Set<BoardMessage>();
  private readonly waiters = new Set<() => void>();

  constructor(readonly link: Duplex) {
    this.parser = new FrameParser(
      (f) => {
        const m = decodeBoardMessage(f);
        if (m.kind === "invalid") this.invalid.push(m);
        else this.messages.push(m);
        for (const w of [...this.waiters]) w();
      },
      (d) => this.discards.push(d),
    );
    link.on("data", (chunk: Buffer) => this.parser.push(chunk));
  }

  send(req: HostRequest): void {
    this.link.write(Buffer.from(encodeFrame(hostRequestFrame(req))));
  }

  /** Raw bytes onto the line (corrupt frames, noise). */
  sendRaw(bytes: Uint8Array): void {
    this.link.write(Buffer.from(bytes));
  }

  /**
   * The earliest matching message not returned by an earlier call (already received or still to come);
   * rejects after `timeoutMs`.
   */
  next<T extends BoardMessage = BoardMessage>(
    predicate: ((m: BoardMessage) => m is T) | ((m: BoardMessage) => boolean),
    timeoutMs = 1_000,
  ): Promise<T> {
    return new Promise((resolve, reject) => {
      const check = () => {
        const m = this.messages.find((x) => !this.taken.has(x) && predicate(x));
        if (!m) return false;
        this.taken.add(m);
        this.waiters.delete(waiter);
        clearTimeout(timer);
        resolve(m as T);
        return true;
      };
      const waiter = () => void check();
      const timer = setTimeout(() => {
        this.waiters.delete(waiter);
        const got = this.messages.map((m) => m.kind).join(", ") || "nothing";
        reject(new Error(`no matching board message within ${timeoutMs} ms (got: ${got})`));
      }, timeoutMs);
      this.waiters.add(waiter);
      check();
    });
  }

  /** Sends a request and resolves with its ACK/NAK and, after an ACK, its reply (matched by SEQ). */
  async request(
    req: HostRequest,
    timeoutMs = 1_000,
  ): Promise<{ ack: BoardMessage; reply: BoardMessage | null }> {
    const mine = (m: BoardMessage) => m.kind !== "event" && m.addr === req.addr && m.seq === req.seq;
    this.send(req);
    const ack = await this.next((m) => mine(m) && (m.kind === "ack" || m.kind === "nak"), timeoutMs);
    if (ack.kind === "nak") return { ack, reply: null };
    const reply = await this.next((m) => mine(m) && m.kind !== "ack" && m.kind !== "nak", timeoutMs);
    return { ack, reply };
  }
}
