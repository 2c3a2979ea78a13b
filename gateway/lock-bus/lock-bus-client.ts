import { EventEmitter } from "node:events";
import type { Logger } from "pino";
import type { Clock, TimerHandle } from "../../shared/clock.ts";
import { encodeFrame } from "../../shared/protocol/lock-bus/frame.ts";
import { FrameParser } from "../../shared/protocol/lock-bus/frame-parser.ts";
import {
  type BoardMessage,
  decodeBoardMessage,
  type HostRequest,
  hostRequestFrame,
} from "../../shared/protocol/lock-bus/messages.ts";
import { closeLink, type SerialLink, type SerialLinkFactory } from "../ports.ts";
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
  /** Reopen backoff: starts here, doubles, capped at maxReopenMs. */
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
 * Owns the link: reopens it with backoff when it closes, and fails the transaction in flight instead
 * of hanging. Unsolicited board events are emitted as they come.
 */
export class LockBusClient extends EventEmitter<Events> {
  private link: SerialLink | null = null;
  private seq = 0;
  private queue: Promise<unknown> = Promise.resolve();
  private current: {
    state: TxState;
    expect: { addr: number; seq: number; replyKind: BoardMessage["kind"] };
    wake: () => void;
  } | null = null;
  private reopenTimer: TimerHandle | null = null;
  private reopenMs: number;
  private stopped = false;
  private readonly parser: FrameParser;

  constructor(private readonly o: LockBusOptions) {
    super();
    this.reopenMs = o.minReopenMs ?? 500;
    this.parser = new FrameParser(
      (frame) => this.onMessage(decodeBoardMessage(frame)),
      (d) => {
        o.log.debug({ bus: o.name, reason: d.reason, bytes: d.bytes.length }, "discarded bytes on the bus");
        this.emit("discarded", d.bytes.length);
      },
    );
  }

  get isOpen(): boolean {
    return this.link !== null;
  }

  async start(): Promise<void> {
    await this.open();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.reopenTimer) this.o.clock.clearTimer(this.reopenTimer);
    const link = this.link;
    this.link = null;
    this.feed({ kind: "closed" });
    if (link) await closeLink(link);
  }

  /** Sends one request and resolves with the board's reply; rejects with BusError. */
  request<R extends Request>(req: R): Promise<BoardMessage> {
    const run = () => this.transact(req);
    const result = this.queue.then(run, run);
    this.queue = result.catch(() => undefined);
    return result;
  }

  private async open(): Promise<void> {
    if (this.stopped) return;
    try {
      const link = await this.o.openLink(this.o.path, this.o.baudRate);
      // stop() ran while the port was opening: release it instead of holding it after the stop.
      if (this.stopped) {
        await closeLink(link);
        return;
      }
      link.on("data", (chunk: Buffer) => this.parser.push(chunk));
      link.once("close", () => this.onClosed(link));
      link.on("error", (err) => this.o.log.warn({ bus: this.o.name, err: err.message }, "serial error"));
      this.link = link;
      this.reopenMs = this.o.minReopenMs ?? 500;
      this.o.log.info({ bus: this.o.name, path: this.o.path }, "bus open");
      this.emit("open");
    } catch (err) {
      this.o.log.warn(
        { bus: this.o.name, path: this.o.path, err: (err as Error).message },
        "cannot open the bus; retrying",
      );
      this.scheduleReopen();
    }
  }

  private onClosed(link: SerialLink) {
    if (this.link !== link) return;
    this.link = null;
    this.o.log.warn({ bus: this.o.name }, "bus closed");
    this.emit("closed");
    this.feed({ kind: "closed" });
    this.scheduleReopen();
  }

  /** Closes and reopens the link, e.g. when every board stopped answering (a wedged adapter). */
  recycle(): void {
    const link = this.link;
    if (link) void closeLink(link);
  }

  private scheduleReopen() {
    if (this.stopped || this.reopenTimer) return;
    const delay = this.reopenMs;
    this.reopenMs = Math.min(this.reopenMs * 2, this.o.maxReopenMs ?? 10_000);
    this.reopenTimer = this.o.clock.setTimer(delay, () => {
      this.reopenTimer = null;
      void this.open();
    });
  }

  private onMessage(msg: BoardMessage | { kind: "invalid"; reason: string }) {
    if (msg.kind === "invalid") {
      this.o.log.debug({ bus: this.o.name, reason: msg.reason }, "undecodable frame");
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

  private transact(req: Request): Promise<BoardMessage> {
    const link = this.link;
    if (!link) return Promise.reject(new BusError({ reason: "link_closed" }, req.addr));
    this.seq = (this.seq % 255) + 1; // 1..255: SEQ 0 is reserved for events
    const full = { ...req, seq: this.seq } as HostRequest;
    const expect = { addr: req.addr, seq: this.seq, replyKind: REPLY_KIND[req.kind] };
    const ackMs = this.o.ackTimeoutMs ?? 250;
    const replyMs = this.o.replyTimeoutMs ?? 3_000;
    return new Promise<BoardMessage>((resolve, reject) => {
      let timer: TimerHandle | null = null;
      const arm = (ms: number) => {
        if (timer) this.o.clock.clearTimer(timer);
        timer = this.o.clock.setTimer(ms, () => this.feed({ kind: "timeout" }));
      };
      const tx = {
        state: { phase: "awaiting_ack" } as TxState,
        expect,
        wake: () => {
          const s = tx.state;
          if (s.phase === "awaiting_reply") return arm(replyMs);
          if (!isSettled(s)) return;
          if (timer) this.o.clock.clearTimer(timer);
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
