/**
 * A simulated RFID reader on its own serial line (docs/hardware-protocol.md, "RFID readers"): HELLO on
 * power-up, one TAG line per tap, ALIVE while idle. Lines come from the shared encoder so the gateway's
 * parser sees exactly what it was written for.
 */
import type { Duplex } from "node:stream";
import { READER_ALIVE_INTERVAL_MS, readerLine } from "../shared/protocol/rfid-reader/reader-line.ts";
import { type Connector, type LinkEndpoint, writeTo } from "./links.ts";
import { realTimers, type SimTimers, TimerSet } from "./timers.ts";

export type SimReaderOptions = {
  model?: string;
  firmware?: string;
  /** ALIVE period while idle; default 5 s as the protocol says; false = never (quiet tests). */
  aliveMs?: number | false;
  timers?: SimTimers;
};

export class SimReader implements LinkEndpoint {
  readonly model: string;
  readonly firmware: string;
  /** Every line written to the host, without CR LF. */
  readonly sent: string[] = [];
  private readonly aliveMs: number | false;
  private readonly timers: TimerSet;
  private link: Duplex | null = null;
  private connector: Connector | null = null;
  private cancelAlive: (() => void) | null = null;
  private plugged = false;
  private readonly tapListeners = new Set<(uid: string) => void>();

  constructor(
    readonly name: string,
    opts: SimReaderOptions = {},
  ) {
    this.model = opts.model ?? "SIM-RFID";
    this.firmware = opts.firmware ?? "1.0";
    this.aliveMs = opts.aliveMs ?? READER_ALIVE_INTERVAL_MS;
    this.timers = new TimerSet(opts.timers ?? realTimers);
  }

  get isPlugged(): boolean {
    return this.plugged;
  }

  /** Powers up on a fresh link: the first thing the host hears is HELLO. */
  attach(link: Duplex): void {
    this.detach();
    this.link = link;
    link.on("error", ignore);
    this.write(readerLine({ kind: "hello", model: this.model, firmware: this.firmware }));
  }

  detach(): void {
    this.cancelAlive?.();
    this.cancelAlive = null;
    this.link = null;
  }

  /** A card held to the reader; `uid` in any form the protocol allows (hex, `:` or `-` separators). */
  tap(uid: string): void {
    // The card is near the lock too: a lock with its own reader wakes from power save (site.ts `wakes`).
    for (const l of [...this.tapListeners]) l(uid);
    this.write(readerLine({ kind: "tap", card: uid }));
  }

  /** Calls back on every tap, before the TAG line leaves; returns the unsubscribe function. */
  onTap(listener: (uid: string) => void): () => void {
    this.tapListeners.add(listener);
    return () => this.tapListeners.delete(listener);
  }

  /** Any line at all, e.g. line noise the gateway must report as garbage. */
  sendLine(text: string): void {
    this.write(`${text}\r\n`);
  }

  /** Sets how this reader reaches the host and plugs it in (see links.ts connectors). */
  async plugInto(connector: Connector): Promise<void> {
    await this.connector?.disconnect();
    this.connector = connector;
    await this.plugIn();
  }

  /** Pulls the USB cable: the host's link closes and cannot be reopened until plugIn(). */
  async unplug(): Promise<void> {
    this.plugged = false;
    await this.connector?.disconnect();
    this.detach();
  }

  async plugIn(): Promise<void> {
    if (!this.connector) throw new Error(`reader ${this.name} has no connector`);
    await this.connector.connect(this);
    this.plugged = true;
  }

  close(): Promise<void> {
    return this.unplug();
  }

  private write(line: string): void {
    if (!this.link) return;
    this.sent.push(line.replace(/\r\n$/, ""));
    writeTo(this.link, line);
    this.scheduleAlive();
  }

  // ALIVE means "idle for a period", so every line written restarts the wait.
  private scheduleAlive(): void {
    this.cancelAlive?.();
    this.cancelAlive = null;
    const ms = this.aliveMs;
    if (ms === false || ms <= 0 || !this.link) return;
    this.cancelAlive = this.timers.after(ms, () => {
      this.cancelAlive = null;
      this.write(readerLine({ kind: "alive" }));
    });
  }
}

function ignore(): void {}
