/**
 * Ready-made misbehaviours for `board.use()`, one per way a real board lets the gateway down
 * (docs/hardware-protocol.md "Timing": a missing ACK or reply is a failed transaction).
 */
import type { HostRequest } from "../shared/protocol/lock-bus/messages.ts";
import { type Behavior, type BehaviorContext, defineBehavior, isReply } from "./behaviors.ts";

/** The board hears nothing: no ACK, no reply (a dead board, a cut cable branch). */
export function noReply(): Behavior {
  return defineBehavior({ name: "noReply", onHostRequest: () => "handled" });
}

/** The ACK is lost on the wire; the reply still comes. */
export function dropAck(): Behavior {
  return defineBehavior({ name: "dropAck", onSend: (out) => (out.msg?.kind === "ack" ? null : out) });
}

/** Replies (not ACKs or events) come `ms` late, e.g. past the gateway's 2 s reply deadline. */
export function slowReply(ms: number): Behavior {
  return defineBehavior({
    name: "slowReply",
    onSend: (out) => (isReply(out.msg) ? { ...out, delayMs: out.delayMs + ms } : out),
  });
}

/**
 * Line noise: every frame leaves with its CRC inverted, so start byte, length and end byte still line up
 * and the host's parser must reject it on the checksum alone.
 */
export function garble(): Behavior {
  return defineBehavior({
    name: "garble",
    onSend: (out) => {
      const bytes = Uint8Array.from(out.bytes);
      const crcAt = bytes.length - 3;
      if (crcAt < 1) return out;
      bytes[crcAt] = (bytes[crcAt] as number) ^ 0xff;
      bytes[crcAt + 1] = (bytes[crcAt + 1] as number) ^ 0xff;
      return { ...out, bytes };
    },
  });
}

/** The latch on `channel` is stuck: every movement answers result jammed and raises EVENT jammed. */
export function jam(channel: number): Behavior {
  return defineBehavior({
    name: "jam",
    onInstall: (ctx) => ctx.board.setJammed(channel, true),
    onHostRequest: (req, ctx) => {
      // Stays jammed even if someone clears the flag by hand while the behaviour is installed.
      if ((req.kind === "lock" || req.kind === "unlock") && req.channel === channel)
        ctx.board.setJammed(channel, true);
      return undefined;
    },
  });
}

/**
 * The board loses power now: pending movements and replies are forgotten, it is deaf and mute for `ms`,
 * then reboots and announces EVENT reset on channel 0 (protocol "Events"). Uninstalls itself.
 */
/** Each board's brownout in progress: how to end it. */
const outages = new WeakMap<BehaviorContext["board"], () => void>();

export function brownout(ms: number): Behavior {
  return defineBehavior({
    name: "brownout",
    onInstall: (ctx) => {
      // A brownout during another takes over: the board's reset cancels the earlier one's end (a board
      // timer), which would otherwise keep the board silent for good. Power comes back when this one ends.
      outages.get(ctx.board)?.();
      outages.set(ctx.board, ctx.remove);
      ctx.board.reset();
      ctx.after(ms, () => {
        ctx.remove();
        outages.delete(ctx.board);
        ctx.send({ kind: "event", addr: ctx.board.address, channel: 0, event: "reset" });
      });
    },
    onHostRequest: () => "handled",
    onSend: () => null,
  });
}

/**
 * A board that dozes after `idleMs` without requests: the request that wakes it (and any that arrive while
 * it wakes) is answered only after `wakeMs`, ACK included. Starts asleep.
 */
export function lightSleep(wakeMs: number, idleMs = 1_000): Behavior {
  let asleep = true;
  let waking: HostRequest[] | null = null;
  let cancelIdle: (() => void) | null = null;
  return defineBehavior({
    name: "lightSleep",
    onHostRequest: (req, ctx) => {
      const armIdle = () => {
        cancelIdle?.();
        cancelIdle = ctx.after(idleMs, () => {
          asleep = true;
        });
      };
      if (waking) {
        waking.push(req);
        return "handled";
      }
      if (!asleep) {
        armIdle();
        return undefined;
      }
      asleep = false;
      const queue = [req];
      waking = queue;
      ctx.after(wakeMs, () => {
        waking = null;
        armIdle();
        for (const r of queue) ctx.proceed(r);
      });
      return "handled";
    },
  });
}

export type DeepSleep = Behavior & { wake(): void; sleep(): void; readonly asleep: boolean };

/** A board in deep sleep hears and says nothing until `wake()` (or after `sleep()` again). */
export function deepSleep(): DeepSleep {
  let asleep = true;
  return {
    name: "deepSleep",
    onHostRequest: () => (asleep ? "handled" : undefined),
    onSend: (out) => (asleep ? null : out),
    wake() {
      asleep = false;
    },
    sleep() {
      asleep = true;
    },
    get asleep() {
      return asleep;
    },
  };
}
