/**
 * GPIO lines of a GUARD controller (docs/hardware-protocol.md). Values are logical: `true` is the
 * active state whatever the electrical level; `activeLow` tells an adapter to invert.
 */
export const GPIO_LINE_KINDS = {
  /** Output: releases a door strike while active. */
  door_strike: { direction: "out", activeLow: false },
  /** Input: active while the door is closed. */
  door_contact: { direction: "in", activeLow: true },
  /** Input: active while the controller case is open. */
  tamper: { direction: "in", activeLow: false },
  /** Output: powers a device (lock board, reader, camera) while active. */
  power_relay: { direction: "out", activeLow: false },
} as const;

export type GpioLineKind = keyof typeof GPIO_LINE_KINDS;

/** A line's configured name: `<kind>:<device or reader>` (e.g. "door_strike:north"), or the bare kind. */
export function gpioLineName(kind: GpioLineKind, of?: string): string {
  return of ? `${kind}:${of}` : kind;
}
