/**
 * Power save on a lock board's channels (spec: Device `power_save_strategy`; docs/hardware-protocol.md,
 * "Power save"). A channel that sleeps lightly (REMOTE_WAKEUP) wakes on a request addressed to it and
 * answers it, ACK first, only once awake, `wakeMs` later; one in deep sleep (LOCAL_WAKEUP) hears nothing
 * from the bus until a local interaction (a tap on its reader, its door, an item) wakes it. A channel
 * announces each sleep and each wake-up with an EVENT, and dozes off again after `idleMs` without activity.
 */
import type { HostRequest } from "../shared/protocol/lock-bus/messages.ts";
import type { BoardHardware } from "./board-hardware.ts";

export type SleepDepth = "light" | "deep";
export type ChannelPower = "awake" | SleepDepth;

export type PowerSaveOptions = {
  /** Channels that doze off lightly when idle (a request wakes them). */
  light?: readonly number[];
  /** Channels that fall into deep sleep when idle (only a local interaction wakes them). */
  deep?: readonly number[];
  /** Idle time before a power-save channel sleeps; none: only `sleep()` puts a channel to sleep. */
  idleMs?: number;
  /** How long a lightly sleeping channel takes to wake on a request; default 800. */
  wakeMs?: number;
};

type Host = Pick<BoardHardware, "address" | "channelCount" | "event" | "after">;

export class ChannelSleep {
  readonly wakeMs: number;
  private readonly idleMs: number | null;
  /** How each power-save channel sleeps when it idles. */
  private readonly depthOf = new Map<number, SleepDepth>();
  private readonly power = new Map<number, SleepDepth>();
  /** Requests held while a lightly sleeping channel wakes, by channel. */
  private readonly waking = new Map<number, (() => void)[]>();
  private readonly idle = new Map<number, () => void>();
  private readonly cancelWake = new Map<number, () => void>();

  constructor(
    private readonly board: Host,
    opts: PowerSaveOptions = {},
  ) {
    this.wakeMs = opts.wakeMs ?? 800;
    this.idleMs = opts.idleMs ?? null;
    for (const ch of opts.light ?? []) this.depthOf.set(this.check(ch), "light");
    for (const ch of opts.deep ?? []) this.depthOf.set(this.check(ch), "deep");
  }

  /** Power-up: every channel awake, and the power-save ones counting towards their next sleep. */
  start(): void {
    for (const ch of this.depthOf.keys()) this.armIdle(ch);
  }

  state(ch: number): ChannelPower {
    return this.power.get(ch) ?? "awake";
  }

  /** Puts a channel to sleep now (any channel, whatever its configuration) and announces it. */
  sleep(ch: number, depth: SleepDepth): void {
    this.check(ch);
    this.idle.get(ch)?.();
    this.idle.delete(ch);
    // A wake-up under way is abandoned; the requests it held go unanswered.
    this.cancelWake.get(ch)?.();
    this.cancelWake.delete(ch);
    this.waking.delete(ch);
    if (this.power.get(ch) === depth) return;
    this.power.set(ch, depth);
    this.board.event(ch, depth === "light" ? "light_sleep" : "deep_sleep");
  }

  /**
   * Wakes a channel (a local interaction, or `wake()` at the console) and announces it; an awake channel
   * only starts counting its idle time again. Returns whether it was asleep.
   */
  wake(ch: number): boolean {
    this.check(ch);
    this.cancelWake.get(ch)?.();
    this.cancelWake.delete(ch);
    const wasAsleep = this.power.delete(ch);
    if (wasAsleep) this.board.event(ch, "awake");
    this.armIdle(ch);
    const held = this.waking.get(ch) ?? [];
    this.waking.delete(ch);
    for (const go of held) go();
    return wasAsleep;
  }

  /**
   * What a sleeping channel makes of a request addressed to it: false when the board answers it now
   * (PING, a channel awake, or one the board does not have); true when it is held (light sleep: `go` runs
   * once the channel has woken) or lost (deep sleep).
   */
  holds(req: HostRequest, go: () => void): boolean {
    if (req.kind === "ping" || req.channel < 1 || req.channel > this.board.channelCount) return false;
    const ch = req.channel;
    const power = this.power.get(ch);
    if (power === undefined) {
      this.armIdle(ch);
      return false;
    }
    if (power === "deep") return true;
    const held = this.waking.get(ch);
    if (held) {
      held.push(go);
      return true;
    }
    this.waking.set(ch, [go]);
    this.cancelWake.set(
      ch,
      this.board.after(this.wakeMs, () => {
        this.cancelWake.delete(ch);
        this.wake(ch);
      }),
    );
    return true;
  }

  /** Power loss: the board's timers are gone (cancelled by the board); every channel comes back awake. */
  reset(): void {
    this.power.clear();
    this.waking.clear();
    this.idle.clear();
    this.cancelWake.clear();
  }

  private armIdle(ch: number): void {
    this.idle.get(ch)?.();
    this.idle.delete(ch);
    const depth = this.depthOf.get(ch);
    if (!depth || this.idleMs === null) return;
    this.idle.set(
      ch,
      this.board.after(this.idleMs, () => {
        this.idle.delete(ch);
        this.sleep(ch, depth);
      }),
    );
  }

  private check(ch: number): number {
    if (!Number.isInteger(ch) || ch < 1 || ch > this.board.channelCount)
      throw new RangeError(`board ${this.board.address} has no channel ${ch}`);
    return ch;
  }
}
