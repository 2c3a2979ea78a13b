/**
 * GPIO lines of a GUARD controller (docs/hardware-protocol.md, "GPIO lines"). Values are logical: `true` is
 * the active state whatever the electrical level; `activeLow` tells an adapter to invert. A line's name is
 * built and read here only, so the gateway's adapters and the simulator cannot disagree on it.
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
export type GpioLineSpec = (typeof GPIO_LINE_KINDS)[GpioLineKind];

/** A line's configured name: `<kind>:<device or reader>` (e.g. "door_strike:north"), or the bare kind. */
export function gpioLineName(kind: GpioLineKind, of?: string): string {
  return of ? `${kind}:${of}` : kind;
}

/** Reads a line name back: its kind and what it belongs to; null when the kind is not one of the table's. */
export function parseGpioLineName(name: string): { kind: GpioLineKind; of: string | null } | null {
  const colon = name.indexOf(":");
  const kind = colon < 0 ? name : name.slice(0, colon);
  if (!Object.hasOwn(GPIO_LINE_KINDS, kind)) return null;
  return { kind: kind as GpioLineKind, of: colon < 0 ? null : name.slice(colon + 1) };
}

/** Direction and active level of a named line; null for a name whose kind is unknown. */
export function gpioLineSpec(name: string): GpioLineSpec | null {
  const parsed = parseGpioLineName(name);
  return parsed ? GPIO_LINE_KINDS[parsed.kind] : null;
}
