import { EventEmitter } from "node:events";
import type { Logger } from "pino";
import { encodeFrame } from "../../shared/protocol/lock-bus/frame.ts";
import { FrameParser } from "../../shared/protocol/lock-bus/frame-parser.ts";
import {
  type BoardMessage,
  decodeBoardMessage,
  type HostRequest,
  hostRequestFrame,
} from "../../shared/protocol/lock-bus/messages.ts";
import type { Clock, SerialLinkFactory, TimerHandle } from "../ports.ts";
import { ReopeningLink } from "../serial/reopening-link.ts";
import {
  describeFailure,
  isSettled,
  stepTransaction,
  type TxFailure,
  type TxState,
} from "./transaction-machine.ts";

type Request = HostRequest extends infer R ? (R extends HostRequest ? Omit<R, "seq"> : never) : never;

const REPLY_KIND: Record<HostRequest["kind"], BoardMessage["kind"]> = {
  ping: "ping_reply",
  status: "status_reply",
  lock: "lock_result",
  unlock: "unlock_result",
  power: "power_result",
};

export class BusError extends Error {
  constructor(
    readonly failure: TxFailure,
    board: number,
  ) {
    super(describeFailure(failure, board));
  }
}

export type LockBusOptions = {
  name: string;
  path: string;
  baudRate: number;
  openLink: SerialLinkFactory;
  clock: Clock;
  log: Logger;
  ackTimeoutMs?: number;
  replyTimeoutMs?: number;
  /** Reopen backoff (ReopeningLink): starts here, doubles, capped at maxReopenMs. */
  minReopenMs?: number;
  maxReopenMs?: number;
};

type Events = {
  event: [Extract<BoardMessage, { kind: "event" }>];
  open: [];
  closed: [];
  discarded: [number];
};

/**
 * Drives transactions over one serial bus, one at a time (a multi-drop bus carries one conversation).
 * Its link is kept open by a ReopeningLink; a transaction in flight when the link closes fails at once
 * instead of hanging. Unsolicited board events are emitted as they come.
 */
export class LockBusClient extends EventEmitter<Events> {
  private readonly line: ReopeningLink;
  private seq = 0;
  private queue: Promise<unknown> = Promise.resolve();
  private current: {
    state: TxState;
    expect: { addr: number; seq: number; replyKind: BoardMessage["kind"] };
    wake: () => void;
  } | null = null;
  private readonly parser: FrameParser;

  constructor(private readonly options: LockBusOptions) {
    super();
    this.parser = new FrameParser(
      (frame) => this.onMessage(decodeBoardMessage(frame)),
      (discarded) => {
        options.log.debug(
          { bus: options.name, reason: discarded.reason, bytes: discarded.bytes.length },
          "discarded bytes on the bus",
        );
        this.emit("discarded", discarded.bytes.length);
      },
    );
    const log = { bus: options.name, path: options.path };
    this.line = new ReopeningLink({
      path: options.path,
      baudRate: options.baudRate,
      openLink: options.openLink,
      clock: options.clock,
      minReopenMs: options.minReopenMs,
      maxReopenMs: options.maxReopenMs,
    });
    this.line.on("open", (link) => {
      link.on("data", (chunk: Buffer) => this.parser.push(chunk));
      options.log.info(log, "bus open");
      this.emit("open");
    });
    this.line.on("closed", () => {
      options.log.warn({ bus: options.name }, "bus closed");
      this.emit("closed");
      this.feed({ kind: "closed" });
    });
    this.line.on("openFailed", (err) =>
      options.log.warn({ ...log, err: err.message }, "cannot open the bus; retrying"),
    );
    this.line.on("linkError", (err) =>
      options.log.warn({ bus: options.name, err: err.message }, "serial error"),
    );
  }

  get isOpen(): boolean {
    return this.line.isOpen;
  }

  start(): Promise<void> {
    return this.line.start();
  }

  async stop(): Promise<void> {
    const closing = this.line.stop();
    this.feed({ kind: "closed" });
    await closing;
  }

  /**
   * Sends one request and resolves with the board's reply; rejects with BusError. `graceMs` lengthens
   * both deadlines, for a channel that wakes from light sleep before it answers (ACK included).
   * `stillWanted` is asked when the request's turn on the bus comes, behind others: false, it is not sent
   * (a command's deadline passed while a board that does not answer held the bus).
   */
  request<R extends Request>(
    req: R,
    opts: { graceMs?: number; stillWanted?: () => boolean } = {},
  ): Promise<BoardMessage> {
    const run = () =>
      opts.stillWanted?.() === false
        ? Promise.reject(new BusError({ reason: "withdrawn" }, req.addr))
        : this.transact(req, opts.graceMs ?? 0);
    const result = this.queue.then(run, run);
    this.queue = result.catch(() => undefined);
    return result;
  }

  /** Closes and reopens the link, e.g. when every board stopped answering (a wedged adapter). */
  recycle(): void {
    this.line.recycle();
  }

  private onMessage(msg: BoardMessage | { kind: "invalid"; reason: string }) {
    if (msg.kind === "invalid") {
      this.options.log.debug({ bus: this.options.name, reason: msg.reason }, "undecodable frame");
      return;
    }
    if (msg.kind === "event") this.emit("event", msg);
    else this.feed({ kind: "message", msg });
  }

  private feed(input: Parameters<typeof stepTransaction>[1]) {
    const c = this.current;
    if (!c) return;
    const before = c.state.phase;
    c.state = stepTransaction(c.state, input, c.expect);
    if (c.state.phase !== before) c.wake();
  }

  private transact(req: Request, graceMs: number): Promise<BoardMessage> {
    const link = this.line.link;
    if (!link) return Promise.reject(new BusError({ reason: "link_closed" }, req.addr));
    this.seq = (this.seq % 255) + 1; // 1..255: SEQ 0 is reserved for events
    const full = { ...req, seq: this.seq } as HostRequest;
    const expect = { addr: req.addr, seq: this.seq, replyKind: REPLY_KIND[req.kind] };
    const ackMs = (this.options.ackTimeoutMs ?? 250) + graceMs;
    const replyMs = (this.options.replyTimeoutMs ?? 3_000) + graceMs;
    return new Promise<BoardMessage>((resolve, reject) => {
      let timer: TimerHandle | null = null;
      const arm = (ms: number) => {
        if (timer) this.options.clock.clearTimer(timer);
        timer = this.options.clock.setTimer(ms, () => this.feed({ kind: "timeout" }));
      };
      const tx = {
        state: { phase: "awaiting_ack" } as TxState,
        expect,
        wake: () => {
          const s = tx.state;
          if (s.phase === "awaiting_reply") return arm(replyMs);
          if (!isSettled(s)) return;
          if (timer) this.options.clock.clearTimer(timer);
          this.current = null;
          if (s.phase === "done") resolve(s.reply);
          else reject(new BusError(s.failure, req.addr));
        },
      };
      this.current = tx;
      arm(ackMs);
      link.write(Buffer.from(encodeFrame(hostRequestFrame(full))));
    });
  }
}
