/**
 * Lock-controller bus constants (docs/hardware-protocol.md). Several boards share one serial line
 * (115200 8N1); each has an address and numbered channels (one latch + item sensor + door sensor each).
 */
export const STX = 0x02;
export const ETX = 0x03;
/** STX, ADDR, SEQ, CMD, LEN + CRC16 (2) + ETX */
export const FRAME_OVERHEAD = 8;
export const HEADER_LEN = 5;
export const MAX_PAYLOAD = 64;
export const MIN_ADDRESS = 1;
export const MAX_ADDRESS = 247;
export const BAUD_RATE = 115_200;

/** Host → board commands. A board answers each with ACK (or NAK) at once, then with CMD | REPLY_BIT. */
export const CMD = {
  PING: 0x01,
  STATUS: 0x02,
  LOCK: 0x03,
  UNLOCK: 0x04,
  POWER: 0x05,
} as const;

/** Board → host. */
export const ACK = 0x06;
export const NAK = 0x15;
export const REPLY_BIT = 0x80;
/** Unsolicited board event, always with SEQ 0. */
export const EVENT = 0x90;

export const NAK_REASONS = { 1: "bad_frame", 2: "unknown_command", 3: "bad_channel", 4: "busy" } as const;
export type NakReason = (typeof NAK_REASONS)[keyof typeof NAK_REASONS];

/** Outcome of a latch movement, in LOCK/UNLOCK replies. */
export const RESULTS = { 0: "ok", 1: "jammed", 2: "door_open", 3: "no_power", 4: "timeout" } as const;
export type LatchResult = (typeof RESULTS)[keyof typeof RESULTS];

export const EVENTS = {
  1: "door_opened",
  2: "door_closed",
  3: "jammed",
  4: "tamper",
  5: "item_inserted",
  6: "item_removed",
  7: "reset",
  8: "latch_locked",
  9: "latch_unlocked",
  // Power save (spec: Device power_save_strategy). A channel announces the sleep it falls into and every
  // wake-up, whatever woke it; hosts that predate these kinds drop them as unknown events.
  10: "light_sleep",
  11: "deep_sleep",
  12: "awake",
} as const;
export type BoardEventKind = (typeof EVENTS)[keyof typeof EVENTS];

/** STATUS fault bits. */
export const FAULT_JAMMED = 0x01;
export const FAULT_TAMPER = 0x02;

export function codeOf<T extends Record<number, string>>(table: T, name: T[keyof T]): number {
  const entry = Object.entries(table).find(([, v]) => v === name);
  if (!entry) throw new Error(`unknown name ${String(name)}`);
  return Number(entry[0]);
}
