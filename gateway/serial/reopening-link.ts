import { EventEmitter } from "node:events";
import { Backoff } from "../backoff.ts";
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
};

/**
 * Keeps one serial device open for its owner (the lock-bus client, an RFID reader): opens it, and whenever
 * it closes or cannot be opened tries again after a backoff that doubles up to a cap and starts over after
 * a successful open. Links are single use (the SerialLinkFactory port), so each attempt asks for a new one.
 */
export class ReopeningLink extends EventEmitter<Events> {
  private current: SerialLink | null = null;
  private timer: TimerHandle | null = null;
  private stopped = false;
  private readonly backoff: Backoff;

  constructor(private readonly o: ReopeningLinkOptions) {
    super();
    this.backoff = new Backoff({ minMs: o.minReopenMs ?? 500, maxMs: o.maxReopenMs ?? 10_000 });
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
    if (this.current) void closeLink(this.current);
  }

  /** Closes the link for good: no more attempts. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) this.o.clock.clearTimer(this.timer);
    this.timer = null;
    const link = this.current;
    this.current = null;
    if (link) await closeLink(link);
  }

  private async open(): Promise<void> {
    if (this.stopped) return;
    let link: SerialLink;
    try {
      link = await this.o.openLink(this.o.path, this.o.baudRate);
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
    this.backoff.reset();
    this.emit("open", link);
  }

  private onClosed(link: SerialLink): void {
    if (this.current !== link) return;
    this.current = null;
    this.emit("closed");
    this.scheduleReopen();
  }

  private scheduleReopen(): void {
    if (this.stopped || this.timer) return;
    this.timer = this.o.clock.setTimer(this.backoff.next(), () => {
      this.timer = null;
      void this.open();
    });
  }
}
