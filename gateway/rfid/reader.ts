import { EventEmitter } from "node:events";
import { ReadlineParser } from "@serialport/parser-readline";
import type { Logger } from "pino";
import { parseReaderLine } from "../../shared/protocol/rfid-reader/reader-line.ts";
import type { Clock, SerialLinkFactory } from "../ports.ts";
import { ReopeningLink } from "../serial/reopening-link.ts";

type Events = { tap: [string]; lost: []; back: [] };

/**
 * One RFID reader on its serial line (flow 2, steps 1–2): lines → taps with normalised card ids. A reader
 * that is unplugged closes its line; it is reopened with backoff (ReopeningLink) until it answers again,
 * and its loss and return are reported once each.
 */
export class ReaderPort extends EventEmitter<Events> {
  private readonly line: ReopeningLink;
  private wasLost = false;
  lastSeen: string | null = null;

  constructor(
    readonly id: string,
    readonly path: string,
    private readonly options: {
      baudRate: number;
      openLink: SerialLinkFactory;
      clock: Clock;
      log: Logger;
      minReopenMs?: number;
      maxReopenMs?: number;
    },
  ) {
    super();
    this.line = new ReopeningLink({
      path,
      baudRate: options.baudRate,
      openLink: options.openLink,
      clock: options.clock,
      minReopenMs: options.minReopenMs,
      maxReopenMs: options.maxReopenMs ?? 5_000,
    });
    this.line.on("open", (link) => {
      const lines = link.pipe(new ReadlineParser({ delimiter: "\n" }));
      lines.on("data", (line: string) => this.onLine(line));
      this.lastSeen = options.clock.now().toISOString();
      options.log.info({ reader: id, path }, "reader open");
      if (this.wasLost) {
        this.wasLost = false;
        this.emit("back");
      }
    });
    this.line.on("closed", () => {
      options.log.warn({ reader: id }, "reader lost");
      if (!this.wasLost) {
        this.wasLost = true;
        this.emit("lost");
      }
    });
    this.line.on("openFailed", (err) =>
      options.log.debug({ reader: id, err: err.message }, "reader not available; retrying"),
    );
    this.line.on("linkError", (err) =>
      options.log.warn({ reader: id, err: err.message }, "reader serial error"),
    );
  }

  get isOpen(): boolean {
    return this.line.isOpen;
  }

  start(): Promise<void> {
    return this.line.start();
  }

  stop(): Promise<void> {
    return this.line.stop();
  }

  private onLine(raw: string) {
    const line = parseReaderLine(raw);
    this.lastSeen = this.options.clock.now().toISOString();
    if (line.kind === "tap") this.emit("tap", line.card);
    else if (line.kind === "garbage" && line.line)
      this.options.log.debug({ reader: this.id, line: line.line }, "unreadable reader line");
  }
}
