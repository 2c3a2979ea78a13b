import { EventEmitter } from "node:events";
import { ReadlineParser } from "@serialport/parser-readline";
import type { Logger } from "pino";
import type { Clock, TimerHandle } from "../../shared/clock.ts";
import { parseReaderLine } from "../../shared/protocol/rfid-reader/reader-line.ts";
import { closeLink, type SerialLink, type SerialLinkFactory } from "../ports.ts";

type Events = { tap: [string]; lost: []; back: [] };

/**
 * One RFID reader on its serial line (flow 2, steps 1–2): lines → taps with normalised card ids. A reader
 * that is unplugged closes its line; it is reopened with backoff until it answers again, and its loss and
 * return are reported once each.
 */
export class ReaderPort extends EventEmitter<Events> {
  private link: SerialLink | null = null;
  private timer: TimerHandle | null = null;
  private backoffMs: number;
  private stopped = false;
  private wasLost = false;
  lastSeen: string | null = null;

  constructor(
    readonly id: string,
    readonly path: string,
    private readonly o: {
      baudRate: number;
      openLink: SerialLinkFactory;
      clock: Clock;
      log: Logger;
      minReopenMs?: number;
      maxReopenMs?: number;
    },
  ) {
    super();
    this.backoffMs = o.minReopenMs ?? 500;
  }

  get isOpen(): boolean {
    return this.link !== null;
  }

  async start(): Promise<void> {
    await this.open();
  }

  private async open(): Promise<void> {
    if (this.stopped) return;
    try {
      const link = await this.o.openLink(this.path, this.o.baudRate);
      const lines = link.pipe(new ReadlineParser({ delimiter: "\n" }));
      lines.on("data", (line: string) => this.onLine(line));
      link.once("close", () => this.onClosed(link));
      link.on("error", (err) =>
        this.o.log.warn({ reader: this.id, err: err.message }, "reader serial error"),
      );
      this.link = link;
      this.backoffMs = this.o.minReopenMs ?? 500;
      this.lastSeen = this.o.clock.now().toISOString();
      this.o.log.info({ reader: this.id, path: this.path }, "reader open");
      if (this.wasLost) {
        this.wasLost = false;
        this.emit("back");
      }
    } catch (err) {
      this.o.log.debug({ reader: this.id, err: (err as Error).message }, "reader not available; retrying");
      this.retry();
    }
  }

  private onLine(raw: string) {
    const line = parseReaderLine(raw);
    this.lastSeen = this.o.clock.now().toISOString();
    if (line.kind === "tap") this.emit("tap", line.card);
    else if (line.kind === "garbage" && line.line)
      this.o.log.debug({ reader: this.id, line: line.line }, "unreadable reader line");
  }

  private onClosed(link: SerialLink) {
    if (this.link !== link) return;
    this.link = null;
    this.o.log.warn({ reader: this.id }, "reader lost");
    if (!this.wasLost) {
      this.wasLost = true;
      this.emit("lost");
    }
    this.retry();
  }

  private retry() {
    if (this.stopped || this.timer) return;
    const delay = this.backoffMs;
    this.backoffMs = Math.min(delay * 2, this.o.maxReopenMs ?? 5_000);
    this.timer = this.o.clock.setTimer(delay, () => {
      this.timer = null;
      void this.open();
    });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) this.o.clock.clearTimer(this.timer);
    const link = this.link;
    this.link = null;
    if (link) await closeLink(link);
  }
}
