import { randomUuid } from "../../shared/node/random-uuid.ts";
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
 * answer before (elapsed time since is monotonic), or a message of this session came without `sent_at` (a
 * cloud that predates the answer, which never sends one). Silence proves neither: held messages are silent
 * too, so after a restart commands wait on for the answer however long it takes.
 */
export const SESSION_SYNC_WAIT_MS = 5_000;

/**
 * How long an upper bound of the cloud's time is trusted after the round trip it came from; heartbeats ask
 * for a new one (`probe()`) once it is half that old. Past it, deadlines fall back on the lower bound.
 */
export const CEILING_TTL_MS = 10 * 60_000;

/**
 * How much faster the cloud's clock may run than the gateway's monotonic one: an unsynced crystal in a cold
 * cabinet (tens of ppm), with margin. An upper bound widens by it as it ages.
 */
const DRIFT = 1e-4;

/** An upper bound this far above the lower one came from a slow round trip: heartbeats ask again. */
const PROBE_WIDTH_MS = 1_000;

/**
 * Probes go out at most this often: a cloud under load answers slowly, every bound it gives is wide, and a
 * probe with every heartbeat from every gateway would add to that load just when it hurts.
 */
const PROBE_EVERY_MS = 30_000;

/** Probes not yet answered that are kept (heartbeats are QoS 0: most lost ones are never answered). */
const MAX_PROBES = 4;

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
  /**
   * The best upper bound: an answer stamped `at` by the cloud after it heard what the gateway sent at
   * monotonic `sent`, so at any later instant the cloud's now is at most `at` plus the time since `sent`.
   */
  private ceiling: { at: number; sent: number } | null = null;
  /** When this session began (its CONNACK): its `online`, and so the cloud's echo of it, came after. */
  private sessionMono: number | null = null;
  /** Heartbeat probes not yet answered: token → monotonic instant it was made. */
  private readonly probes = new Map<string, number>();
  /** When the last probe was made. */
  private lastProbe: number | null = null;
  /** Since a (re)connect, waiting for a message known to be sent after it (the `sync` echo). */
  private awaitingSession = false;
  private sessionTimer: TimerHandle | null = null;
  private waiters: (() => void)[] = [];
  /** This process has had a session's fresh answer: its estimate since runs on monotonic time. */
  private everFresh = false;
  /** A message of this session carried no `sent_at`: a cloud that predates the answer, which never sends one. */
  private unstampedThisSession = false;
  /** This session's SESSION_SYNC_WAIT_MS has passed. */
  private sessionWaitedOut = false;

  constructor(private readonly deps: { clock: Clock; monotonic: Monotonic; syncWaitMs?: number }) {}

  /**
   * A down message's `sent_at` (ignored when absent or unreadable). `fresh`: it answers this session's
   * `online`, so commands held since the connect may now be judged. `echo`: the token of the probe it
   * answers, if any. Both are round trips, so they also bound the cloud's time from above; a probe made
   * in this session answers it as well as the session's echo does.
   */
  observe(sentAt: string | undefined, fresh = false, echo?: string): void {
    this.raise(sentAt);
    if (sentAt === undefined) this.unstampedThisSession = true;
    const probed = echo === undefined ? undefined : this.probes.get(echo);
    if (echo !== undefined) this.probes.delete(echo);
    const sent = fresh ? this.sessionMono : (probed ?? null);
    if (sent !== null) this.lowerCeiling(sentAt, sent);
    const session = this.sessionMono;
    if (fresh || (probed !== undefined && session !== null && probed >= session)) {
      this.everFresh = true;
      this.endSessionWait();
    } else if (this.sessionWaitedOut && this.unstampedThisSession) this.endSessionWait();
  }

  /** Keeps the answer stamped `iso` to what was sent at `sent` as the upper bound when it is tighter. */
  private lowerCeiling(iso: string | undefined, sent: number): void {
    const at = iso === undefined ? Number.NaN : Date.parse(iso);
    if (!Number.isFinite(at)) return;
    const current = this.cloudLatestMs();
    if (current === null || at + (this.deps.monotonic.nowMs() - sent) < current) this.ceiling = { at, sent };
  }

  /**
   * The cloud's time now, as an upper bound: what a deadline is judged on, so a command is never actuated
   * after it whatever its messages' transit. Null without a round trip in the last CEILING_TTL_MS (a cloud
   * that echoes nothing, or a link that answered no probe), where only the lower bound is known.
   */
  cloudLatestMs(): number | null {
    if (!this.ceiling) return null;
    const age = this.deps.monotonic.nowMs() - this.ceiling.sent;
    if (age > CEILING_TTL_MS) return null;
    return Math.max(this.ceiling.at + age * (1 + DRIFT), this.cloudNowMs() ?? 0);
  }

  /**
   * A token for the next heartbeat (the cloud echoes it on an `ack`) when the upper bound is missing, half
   * its life old or more than PROBE_WIDTH_MS above the lower bound (a slow round trip); undefined otherwise,
   * and within PROBE_EVERY_MS of the last probe, or while a session's own echo may still be on its way.
   */
  probe(): string | undefined {
    const now = this.deps.monotonic.nowMs();
    if (this.lastProbe !== null && now - this.lastProbe < PROBE_EVERY_MS) return undefined;
    const echoDue = this.sessionMono !== null && now - this.sessionMono < SESSION_SYNC_WAIT_MS;
    if (this.awaitingSession && echoDue) return undefined;
    const width = (this.cloudLatestMs() ?? Number.POSITIVE_INFINITY) - (this.cloudNowMs() ?? 0);
    if (this.ceiling && now - this.ceiling.sent < CEILING_TTL_MS / 2 && width <= PROBE_WIDTH_MS)
      return undefined;
    const token = randomUuid();
    this.lastProbe = now;
    this.probes.set(token, now);
    for (const old of this.probes.keys()) if (this.probes.size > MAX_PROBES) this.probes.delete(old);
    return token;
  }

  /** Keeps `at` as the bound when it is beyond the current estimate. */
  private raise(iso: string | undefined): void {
    const at = iso === undefined ? Number.NaN : Date.parse(iso);
    if (!Number.isFinite(at)) return;
    const current = this.cloudNowMs();
    if (current === null || at > current) this.bound = { at, mono: this.deps.monotonic.nowMs() };
  }

  /** The cloud's time now, as a lower bound; null before any message carried it. */
  cloudNowMs(): number | null {
    if (!this.bound) return null;
    return this.bound.at + (this.deps.monotonic.nowMs() - this.bound.mono);
  }

  /**
   * Monotonic instant `mono` on the cloud's clock, null before there is an estimate. A bound learnt later
   * holds for earlier instants too: both run on monotonic time.
   */
  dateMono(mono: number): Date | null {
    return this.bound ? new Date(this.bound.at + (mono - this.bound.mono)) : null;
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
   * `sent_at` a weak bound. Until the session's echo (or a probe's) arrives `settled()` waits; after
   * SESSION_SYNC_WAIT_MS it stops waiting when the estimate is trustworthy without it. A restarted gateway
   * whose broker kept stamped commands for it while the cloud is away, or whose messages are held on the
   * way, holds them until the cloud answers.
   */
  sessionStarted(): void {
    this.sessionMono = this.deps.monotonic.nowMs();
    this.awaitingSession = true;
    this.unstampedThisSession = false;
    this.sessionWaitedOut = false;
    if (this.sessionTimer) this.deps.clock.clearTimer(this.sessionTimer);
    this.sessionTimer = this.deps.clock.setTimer(this.deps.syncWaitMs ?? SESSION_SYNC_WAIT_MS, () => {
      this.sessionTimer = null;
      this.sessionWaitedOut = true;
      if (this.everFresh || this.unstampedThisSession) this.endSessionWait();
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
