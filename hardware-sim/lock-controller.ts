/**
 * A simulated lock-controller board (docs/hardware-protocol.md, "Lock-controller bus"): an address, a
 * firmware version and channels with mechanical state. It speaks through the shared frame codec, so it
 * cannot drift from what the gateway parses.
 */
import type { Duplex } from "node:stream";
import { CMD, MAX_ADDRESS, MIN_ADDRESS } from "../shared/protocol/lock-bus/constants.ts";
import { encodeFrame, type Frame } from "../shared/protocol/lock-bus/frame.ts";
import { FrameParser } from "../shared/protocol/lock-bus/frame-parser.ts";
import {
  type BoardMessage,
  boardMessageFrame,
  decodeHostRequest,
  type HostRequest,
  type LatchState,
} from "../shared/protocol/lock-bus/messages.ts";
import type { Behavior, BehaviorContext, Outgoing } from "./behaviors.ts";
import { BoardFirmware } from "./board-firmware.ts";
import type { BoardEventName, BoardHardware, ChannelState } from "./board-hardware.ts";
import { type ChannelPower, ChannelSleep, type PowerSaveOptions, type SleepDepth } from "./channel-sleep.ts";
import { type LinkEndpoint, writeTo } from "./links.ts";
import { realTimers, type SimTimers, TimerSet } from "./timers.ts";

export type LockBoardOptions = {
  address: number;
  /** Channel count, 1–64; default 8. */
  channels?: number;
  /** "major.minor"; default "1.0". */
  firmware?: string;
  /** How long a latch takes to move before the LOCK/UNLOCK reply; default 300, 0 = instant. */
  moveMs?: number;
  /** Channels that are door locks (re-lock after UNLOCK's hold seconds). */
  doors?: readonly number[];
  /** Where locker and dock latches are at power-up; default locked. Door locks always start locked. */
  latch?: LatchState;
  /** Channels that sleep when idle, how deeply, and their idle and wake-up times (channel-sleep.ts). */
  powerSave?: PowerSaveOptions;
  timers?: SimTimers;
};

const KNOWN_COMMANDS = new Set<number>(Object.values(CMD));

export class LockBoard implements LinkEndpoint, BoardHardware {
  readonly address: number;
  readonly firmware: string;
  moveMs: number;
  /** Every request the host sent to this address, in order (whether or not a fault let it be answered). */
  readonly received: HostRequest[] = [];
  private readonly channels: ChannelState[];
  private readonly timers: TimerSet;
  private readonly parser: FrameParser;
  private readonly listeners = new Set<(req: HostRequest) => void>();
  private behaviors: Behavior[] = [];
  private sink: ((bytes: Uint8Array) => void) | null = null;
  private link: Duplex | null = null;
  private readonly builtIn: BoardFirmware = new BoardFirmware(this);
  private readonly power: ChannelSleep;

  constructor(opts: LockBoardOptions) {
    const count = opts.channels ?? 8;
    if (!Number.isInteger(count) || count < 1 || count > 64)
      throw new RangeError(`channel count ${count} out of 1–64`);
    if (!Number.isInteger(opts.address) || opts.address < MIN_ADDRESS || opts.address > MAX_ADDRESS) {
      throw new RangeError(`board address ${opts.address} out of ${MIN_ADDRESS}–${MAX_ADDRESS}`);
    }
    this.address = opts.address;
    this.firmware = opts.firmware ?? "1.0";
    this.moveMs = opts.moveMs ?? 300;
    this.timers = new TimerSet(opts.timers ?? realTimers);
    const doors = new Set(opts.doors ?? []);
    this.channels = Array.from({ length: count }, (_, i) => ({
      kind: doors.has(i + 1) ? "door" : "locker",
      latch: doors.has(i + 1) ? "locked" : (opts.latch ?? "locked"),
      itemPresent: false,
      doorOpen: false,
      jammed: false,
      tamper: false,
      powered: true,
    }));
    // Corrupt frames are dropped by the parser: a board answers nothing to them (protocol "Exchange").
    this.parser = new FrameParser((f) => this.onFrame(f));
    this.power = new ChannelSleep(this, opts.powerSave);
    this.power.start();
  }

  get channelCount(): number {
    return this.channels.length;
  }

  /** The live state of channel n (1-based); throws for a channel the board does not have. */
  channel(n: number): ChannelState {
    const c = this.channels[n - 1];
    if (!c || n < 1) throw new RangeError(`board ${this.address} has no channel ${n}`);
    return c;
  }

  /** Installs a behaviour ahead of the others; returns its uninstall function. */
  use(behavior: Behavior): () => void {
    this.behaviors = [behavior, ...this.behaviors];
    behavior.onInstall?.(this.contextFor(behavior));
    return () => this.remove(behavior);
  }

  remove(behavior: Behavior): void {
    this.behaviors = this.behaviors.filter((b) => b !== behavior);
  }

  /** Calls back on every request addressed to this board; returns the unsubscribe function. */
  onRequest(listener: (req: HostRequest) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Wires the board alone to a link (a bus of one). */
  attach(link: Duplex): void {
    this.detach();
    this.link = link;
    link.on("data", this.onData);
    link.on("error", ignore);
    this.connect((bytes) => writeTo(link, bytes));
  }

  detach(): void {
    this.link?.off("data", this.onData);
    this.link = null;
    this.disconnect();
  }

  /** Where the board's bytes go (a bus or a link). */
  connect(sink: (bytes: Uint8Array) => void): void {
    this.sink = sink;
  }

  disconnect(): void {
    this.sink = null;
  }

  /** Bytes from the host side of the line. */
  receive(chunk: Uint8Array): void {
    this.parser.push(chunk);
  }

  private readonly onData = (chunk: Buffer) => this.receive(chunk);

  /** Sends a message through the behaviours' `onSend` hooks. */
  send(msg: BoardMessage, delayMs = 0): void {
    let out: Outgoing | null = { msg, bytes: encodeFrame(boardMessageFrame(msg)), delayMs };
    for (const b of this.behaviors) {
      if (!out) return;
      if (b.onSend) out = b.onSend(out, this.contextFor(b));
    }
    if (!out) return;
    const bytes = out.bytes;
    if (out.delayMs > 0) this.after(out.delayMs, () => this.sendRaw(bytes));
    else this.sendRaw(bytes);
  }

  sendRaw(bytes: Uint8Array): void {
    this.sink?.(bytes);
  }

  after(ms: number, fn: () => void): () => void {
    return this.timers.after(ms, fn);
  }

  /** Power loss: every pending movement, hold timer and delayed reply is forgotten; channels wake up. */
  reset(): void {
    this.powerOff();
    this.power.start();
  }

  close(): void {
    this.powerOff();
    this.detach();
  }

  private powerOff(): void {
    this.timers.cancelAll();
    this.builtIn.reset();
    this.power.reset();
  }

  // Power save (channel-sleep.ts): a test or the console puts channels to sleep and wakes them.

  /** Awake, or how deeply the channel sleeps. */
  sleepState(ch: number): ChannelPower {
    this.channel(ch);
    return this.power.state(ch);
  }

  /** The channel falls asleep now and says so (EVENT light_sleep / deep_sleep). */
  sleep(ch: number, depth: SleepDepth): void {
    this.power.sleep(ch, depth);
  }

  /** A local interaction wakes the channel (EVENT awake); returns whether it was asleep. */
  wake(ch: number): boolean {
    return this.power.wake(ch);
  }

  // Physical actions, for a test or a person at the console. Each reports itself as a board EVENT, and
  // each is a local interaction: it wakes a sleeping channel first.

  /** Pushes the door open; a latched door stays shut (returns false). */
  openDoor(ch: number): boolean {
    const c = this.channel(ch);
    this.power.wake(ch);
    if (c.latch === "locked" || c.doorOpen) return c.doorOpen;
    c.doorOpen = true;
    this.event(ch, "door_opened");
    return true;
  }

  closeDoor(ch: number): void {
    const c = this.channel(ch);
    this.power.wake(ch);
    if (!c.doorOpen) return;
    c.doorOpen = false;
    this.event(ch, "door_closed");
    // A door lock whose hold ran out while the door stood open engages as the door shuts.
    this.builtIn.doorClosed(ch);
  }

  insertItem(ch: number): void {
    const c = this.channel(ch);
    this.power.wake(ch);
    if (c.itemPresent) return;
    c.itemPresent = true;
    this.event(ch, "item_inserted");
  }

  removeItem(ch: number): void {
    const c = this.channel(ch);
    this.power.wake(ch);
    if (!c.itemPresent) return;
    c.itemPresent = false;
    this.event(ch, "item_removed");
  }

  setTamper(ch: number, on: boolean): void {
    const c = this.channel(ch);
    const was = c.tamper;
    c.tamper = on;
    if (on && !was) this.event(ch, "tamper");
  }

  /** Jams (or frees) the latch; the host learns of it on the next movement or STATUS. */
  setJammed(ch: number, on: boolean): void {
    this.channel(ch).jammed = on;
  }

  /** Someone turns the latch by hand (service key). */
  turnLatch(ch: number, latch: LatchState): void {
    const c = this.channel(ch);
    this.power.wake(ch);
    if (c.latch === latch) return;
    c.latch = latch;
    this.event(ch, latch === "locked" ? "latch_locked" : "latch_unlocked");
  }

  /** Sends an unsolicited EVENT for a channel (SEQ 0). */
  event(channel: number, event: BoardEventName): void {
    this.send({ kind: "event", addr: this.address, channel, event });
  }

  private onFrame(f: Frame): void {
    if (f.addr !== this.address) return;
    const req = decodeHostRequest(f);
    if (req.kind === "invalid") {
      const reason = KNOWN_COMMANDS.has(f.cmd) ? "bad_frame" : "unknown_command";
      this.send({ kind: "nak", addr: this.address, seq: f.seq, reason });
      return;
    }
    this.received.push(req);
    for (const l of [...this.listeners]) l(req);
    // A sleeping channel's power state comes before any behaviour: deep sleep hears nothing at all.
    if (this.power.holds(req, () => this.dispatch(req, 0))) return;
    this.dispatch(req, 0);
  }

  private dispatch(req: HostRequest, from: number): void {
    const chain = this.behaviors;
    for (let i = from; i < chain.length; i++) {
      const b = chain[i] as Behavior;
      if (b.onHostRequest?.(req, this.contextFor(b)) === "handled") return;
    }
    this.builtIn.handle(req);
  }

  private contextFor(behavior: Behavior): BehaviorContext {
    return {
      board: this,
      send: (msg, delayMs) => this.send(msg, delayMs),
      sendRaw: (bytes) => this.sendRaw(bytes),
      after: (ms, fn) => this.after(ms, fn),
      proceed: (req) => {
        const i = this.behaviors.indexOf(behavior);
        this.dispatch(req, i < 0 ? this.behaviors.length : i + 1);
      },
      remove: () => this.remove(behavior),
    };
  }
}

function ignore(): void {}
