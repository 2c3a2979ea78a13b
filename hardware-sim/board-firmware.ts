/**
 * The built-in answers of a lock board, what runs when no behaviour handled a request
 * (docs/hardware-protocol.md, "Exchange"): ACK or NAK at once, the reply once the latch has moved.
 */
import type { LatchResult } from "../shared/protocol/lock-bus/constants.ts";
import type { HostRequest, LatchState } from "../shared/protocol/lock-bus/messages.ts";
import type { BoardHardware } from "./board-hardware.ts";

type Movement = Extract<HostRequest, { kind: "lock" | "unlock" }>;

export class BoardFirmware {
  /** One movement at a time: until the latch settles the board answers NAK busy. */
  private moving = false;
  /** Door-lock hold timers by channel (UNLOCK's hold seconds). */
  private readonly holds = new Map<number, () => void>();
  /** Door locks whose hold ran out while the door stood open: they engage as the door shuts. */
  private readonly relockOnClose = new Set<number>();

  constructor(private readonly board: BoardHardware) {}

  handle(req: HostRequest): void {
    const b = this.board;
    const head = { addr: b.address, seq: req.seq };
    if (this.moving) {
      b.send({ kind: "nak", ...head, reason: "busy" });
    } else if (req.kind !== "ping" && (req.channel < 1 || req.channel > b.channelCount)) {
      b.send({ kind: "nak", ...head, reason: "bad_channel" });
    } else {
      b.send({ kind: "ack", ...head });
      this.answer(req);
    }
  }

  doorClosed(ch: number): void {
    if (this.relockOnClose.delete(ch)) this.relock(ch);
  }

  /** Power loss: pending movements and hold timers are gone (their timers are cancelled by the board). */
  reset(): void {
    this.moving = false;
    this.holds.clear();
    this.relockOnClose.clear();
  }

  private answer(req: HostRequest): void {
    const b = this.board;
    const head = { addr: b.address, seq: req.seq };
    switch (req.kind) {
      case "ping": {
        const [major = "0", minor = "0"] = b.firmware.split(".");
        b.send({ kind: "ping_reply", ...head, firmware: `${major}.${minor}`, channels: b.channelCount });
        break;
      }
      case "status": {
        const { latch, itemPresent, doorOpen, jammed, tamper } = b.channel(req.channel);
        b.send({
          kind: "status_reply",
          ...head,
          channel: req.channel,
          latch,
          itemPresent,
          doorOpen,
          jammed,
          tamper,
        });
        break;
      }
      case "power": {
        const c = b.channel(req.channel);
        c.powered = req.on;
        b.send({ kind: "power_result", ...head, channel: req.channel, on: c.powered });
        break;
      }
      case "lock":
      case "unlock":
        if (b.moveMs <= 0) {
          this.move(req);
          break;
        }
        this.moving = true;
        b.after(b.moveMs, () => {
          this.moving = false;
          this.move(req);
        });
        break;
    }
  }

  private move(req: Movement): void {
    const b = this.board;
    const c = b.channel(req.channel);
    const target: LatchState = req.kind === "lock" ? "locked" : "unlocked";
    let result: LatchResult = "ok";
    if (!c.powered) result = "no_power";
    else if (c.jammed) result = "jammed";
    // "a locker will not lock with its door open" (protocol "Exchange", results).
    else if (target === "locked" && c.doorOpen) result = "door_open";
    if (result === "ok") {
      c.latch = target;
      this.holds.get(req.channel)?.();
      this.holds.delete(req.channel);
      this.relockOnClose.delete(req.channel);
      if (req.kind === "unlock" && c.kind === "door" && req.holdS > 0) this.startHold(req.channel, req.holdS);
    }
    const kind = req.kind === "lock" ? "lock_result" : "unlock_result";
    b.send({ kind, addr: b.address, seq: req.seq, channel: req.channel, result, latch: c.latch });
    if (result === "jammed") b.event(req.channel, "jammed");
  }

  private startHold(ch: number, holdS: number): void {
    const cancel = this.board.after(holdS * 1000, () => {
      this.holds.delete(ch);
      if (this.board.channel(ch).doorOpen) this.relockOnClose.add(ch);
      else this.relock(ch);
    });
    this.holds.set(ch, cancel);
  }

  /** A door lock re-engages by itself and says so (EVENT latch_locked, protocol "Events"). */
  private relock(ch: number): void {
    const c = this.board.channel(ch);
    if (c.jammed) {
      this.board.event(ch, "jammed");
    } else if (c.latch !== "locked") {
      c.latch = "locked";
      this.board.event(ch, "latch_locked");
    }
  }
}
