import type { AlarmSeverity } from "./alarm-machine.ts";

/** What the inbox keeps alarms of: the site events that need a person (docs/decisions/alarms.md). */
export const ALARM_KINDS = [
  "tamper",
  "door_held_open",
  "jammed",
  "interim_state_timed_out",
  "connection_lost",
  "connection_confirmed",
  "storage_full",
] as const;
export type AlarmKind = (typeof ALARM_KINDS)[number];

/**
 * How bad each kind is. A case opened may be vandalism, and a location dark for 2 hours serves nobody:
 * CRITICAL. A jammed latch or a door held open takes a place out of use: MAJOR. One device offline is
 * often a short radio gap: MINOR. A command that timed out has already ended and the device says where
 * it is: WARNING. A gateway whose state store is full refuses every tap and command it cannot journal, so its
 * whole site is out of use: CRITICAL.
 */
export const ALARM_SEVERITY: Readonly<Record<AlarmKind, AlarmSeverity>> = {
  tamper: "CRITICAL",
  connection_confirmed: "CRITICAL",
  storage_full: "CRITICAL",
  jammed: "MAJOR",
  door_held_open: "MAJOR",
  connection_lost: "MINOR",
  interim_state_timed_out: "WARNING",
};

/** What an alarm is about, as its `subject` column names it. */
export type AlarmSubject =
  | { kind: "device"; id: string }
  | { kind: "gateway"; id: string }
  | { kind: "location"; id: string };

export function subjectKey(s: AlarmSubject): string {
  return `${s.kind}:${s.id}`;
}
