import type { Clock, Monotonic, TimerHandle } from "../../shared/time/clock.ts";

/**
 * Beyond this the gateway's wall clock is reported skewed (heartbeat flag, `parkctl doctor` warning). NTP
 * keeps a synced clock within milliseconds, and the estimate itself is low by at most one message's transit
 * (tens of ms, seconds on a stalled modem): 5 s is well clear of both, and far below the 30 s command
 * deadlines a wrong clock would break.
 */
export const SKEW_BOUND_MS = 5_000;

/**
 * How long commands wait after a (re)connect for the cloud's answer to this session's `online` before they
 * are judged on the best estimate so far — when that estimate can be trusted: this process heard a fresh
 * answer before (elapsed time since is monotonic), or nothing this session carried `sent_at` (a cloud that
 * predates the answer, which never sends one).
 */
export const SESSION_SYNC_WAIT_MS = 5_000;

/**
 * The cloud's clock as the gateway can know it (docs/decisions/clock.md). Every down message carries the
 * cloud's `sent_at`; when it arrives the cloud's now is at least that, and stays at least that plus the
 * monotonic time elapsed since. The largest such bound is kept, so an old copy redelivered from a broker
 * queue (or a retained map) never pulls the estimate back. The gateway's wall clock plays no part, except
 * as what `offsetMs()` compares the estimate with.
 */
export class CloudClock {
  /** The best bound: the cloud's time `at` monotonic instant `mono`. */
  private bound: { at: number; mono: number } | null = null;
  /** Since a (re)connect, waiting for a message known to be sent after it (the `sync` echo). */
  private awaitingSession = false;
  private sessionTimer: TimerHandle | null = null;
  private waiters: (() => void)[] = [];
  /** This process has had a session's fresh answer: its estimate since runs on monotonic time. */
  private everFresh = false;
  /** A message of this session carried `sent_at`: the cloud stamps its messages, so it will answer. */
  private stampedThisSession = false;

  constructor(private readonly deps: { clock: Clock; monotonic: Monotonic; syncWaitMs?: number }) {}

  /**
   * A down message's `sent_at` (ignored when absent or unreadable). `fresh`: it answers this session's
   * `online`, so commands held since the connect may now be judged.
   */
  observe(sentAt: string | undefined, fresh = false): void {
    if (this.raise(sentAt)) this.stampedThisSession = true;
    if (fresh) {
      this.everFresh = true;
      this.endSessionWait();
    }
  }

  /** Keeps `at` as the bound when it is beyond the current estimate; false when unreadable. */
  private raise(iso: string | undefined): boolean {
    const at = iso === undefined ? Number.NaN : Date.parse(iso);
    if (!Number.isFinite(at)) return false;
    const current = this.cloudNowMs();
    if (current === null || at > current) this.bound = { at, mono: this.deps.monotonic.nowMs() };
    return true;
  }

  /** The cloud's time now, as a lower bound; null before any message carried it. */
  cloudNowMs(): number | null {
    if (!this.bound) return null;
    return this.bound.at + (this.deps.monotonic.nowMs() - this.bound.mono);
  }

  /**
   * Marks this instant; the function returned dates it on the cloud's clock once there is an estimate (a
   * bound learnt later holds for earlier instants too: both run on monotonic time), null until then.
   */
  instant(): () => Date | null {
    const mono = this.deps.monotonic.nowMs();
    return () => (this.bound ? new Date(this.bound.at + (mono - this.bound.mono)) : null);
  }

  cloudNow(): Date | null {
    const ms = this.cloudNowMs();
    return ms === null ? null : new Date(ms);
  }

  /** The estimate minus the gateway's wall clock (positive: the wall clock is behind); null before any sync. */
  offsetMs(): number | null {
    const ms = this.cloudNowMs();
    return ms === null ? null : ms - this.deps.clock.now().getTime();
  }

  /** True when the wall clock is more than SKEW_BOUND_MS off the estimate. */
  isSkewed(): boolean {
    const offset = this.offsetMs();
    return offset !== null && Math.abs(offset) > SKEW_BOUND_MS;
  }

  /**
   * The broker session (re)started: what arrives first may have waited in the broker since long ago, its
   * `sent_at` a weak bound. Until the session's echo arrives `settled()` waits; after SESSION_SYNC_WAIT_MS it
   * stops waiting when the estimate is trustworthy without it. A restarted gateway whose broker kept stamped
   * commands for it while the cloud is away holds them until the cloud is back and answers.
   */
  sessionStarted(): void {
    this.awaitingSession = true;
    this.stampedThisSession = false;
    if (this.sessionTimer) this.deps.clock.clearTimer(this.sessionTimer);
    this.sessionTimer = this.deps.clock.setTimer(this.deps.syncWaitMs ?? SESSION_SYNC_WAIT_MS, () => {
      this.sessionTimer = null;
      if (this.everFresh || !this.stampedThisSession) this.endSessionWait();
    });
  }

  /** Resolves once the estimate is as fresh as this session can make it (at once outside a session's start). */
  settled(): Promise<void> {
    if (!this.awaitingSession) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Cancels the fallback timer; what still waits is dropped with the process (the cloud sends it again). */
  stop(): void {
    if (this.sessionTimer) this.deps.clock.clearTimer(this.sessionTimer);
    this.sessionTimer = null;
  }

  /** Releases what waits and cancels the fallback timer. */
  private endSessionWait(): void {
    this.awaitingSession = false;
    if (this.sessionTimer) this.deps.clock.clearTimer(this.sessionTimer);
    this.sessionTimer = null;
    for (const w of this.waiters.splice(0)) w();
  }
}
