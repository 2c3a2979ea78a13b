import { EventEmitter } from "node:events";
import { Backoff } from "../../shared/time/backoff.ts";
import type { Clock, SerialLink, SerialLinkFactory, TimerHandle } from "../ports.ts";
import { closeLink } from "./close-link.ts";

export type ReopeningLinkOptions = {
  path: string;
  baudRate: number;
  openLink: SerialLinkFactory;
  clock: Clock;
  /** The first wait after a failed open or a lost link; doubles per failure up to maxReopenMs. */
  minReopenMs?: number;
  maxReopenMs?: number;
  /**
   * How long a link must stay open before its loss starts the backoff over (default maxReopenMs): a peer
   * that accepts and drops at once (a device server without its device, a flapping adapter) is retried
   * with growing waits, like one that cannot be opened at all.
   */
  stableMs?: number;
};

type Events = {
  /** A fresh link is open: its owner wires its reading side now. */
  open: [SerialLink];
  /** The open link closed (device unplugged, cable pulled, recycle()); a reopen is scheduled. */
  closed: [];
  /** Opening failed; another attempt is scheduled. */
  openFailed: [Error];
  /** The open link reported an error (it usually closes next). */
  linkError: [Error];
  /** The next attempt is due in `ms` (after each `closed` and `openFailed`). */
  waiting: [ms: number];
};

/**
 * Keeps one serial device open for its owner (the lock-bus client, an RFID reader): opens it, and whenever
 * it closes or cannot be opened tries again after a backoff that doubles up to a cap and starts over once
 * a link has stayed open for a while. Links are single use (the SerialLinkFactory port), so each attempt
 * asks for a new one. Every wait is a timer on the injected clock, never a retry at once: a vanished peer
 * costs a handful of attempts a minute, not a busy loop.
 */
export class ReopeningLink extends EventEmitter<Events> {
  private current: SerialLink | null = null;
  private timer: TimerHandle | null = null;
  private stopped = false;
  /** When the current link opened (clock ms). */
  private openedAt = 0;
  /** recycle() asked for this close: the reopen comes after the minimum wait. */
  private recycling = false;
  private readonly backoff: Backoff;
  private readonly stableMs: number;

  constructor(private readonly options: ReopeningLinkOptions) {
    super();
    const maxMs = options.maxReopenMs ?? 10_000;
    this.backoff = new Backoff({ minMs: options.minReopenMs ?? 500, maxMs });
    this.stableMs = options.stableMs ?? maxMs;
  }

  /** The open link, or null between a loss and the next successful open. */
  get link(): SerialLink | null {
    return this.current;
  }

  get isOpen(): boolean {
    return this.current !== null;
  }

  /** The first attempt; resolves once it succeeded or failed (a failure schedules the next). */
  start(): Promise<void> {
    return this.open();
  }

  /** Closes the link; it is reopened after the minimum wait (e.g. to unwedge a USB adapter). */
  recycle(): void {
    if (!this.current) return;
    this.recycling = true;
    void closeLink(this.current);
  }

  /** Closes the link for good: no more attempts. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) this.options.clock.clearTimer(this.timer);
    this.timer = null;
    const link = this.current;
    this.current = null;
    if (link) await closeLink(link);
  }

  private async open(): Promise<void> {
    if (this.stopped) return;
    let link: SerialLink;
    try {
      link = await this.options.openLink(this.options.path, this.options.baudRate);
    } catch (err) {
      this.emit("openFailed", err instanceof Error ? err : new Error(String(err)));
      this.scheduleReopen();
      return;
    }
    // stop() ran while the device was opening: release it instead of holding it after the stop.
    if (this.stopped) {
      await closeLink(link);
      return;
    }
    link.once("close", () => this.onClosed(link));
    link.on("error", (err: Error) => this.emit("linkError", err));
    this.current = link;
    this.openedAt = this.options.clock.now().getTime();
    this.emit("open", link);
  }

  private onClosed(link: SerialLink): void {
    if (this.current !== link) return;
    this.current = null;
    const lived = this.options.clock.now().getTime() - this.openedAt;
    if (this.recycling || lived >= this.stableMs) this.backoff.reset();
    this.recycling = false;
    this.emit("closed");
    this.scheduleReopen();
  }

  private scheduleReopen(): void {
    if (this.stopped || this.timer) return;
    const ms = this.backoff.next();
    this.timer = this.options.clock.setTimer(ms, () => {
      this.timer = null;
      void this.open();
    });
    this.emit("waiting", ms);
  }
}
