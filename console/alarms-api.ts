import { call } from "./api.ts";

/**
 * The alarm inbox's calls (cloud/http/routes/console-alarms.ts). Staff ids in alarms are opaque; each
 * answer carries the operator's staff by id, so the inbox shows emails.
 */

export const SEVERITIES = ["CRITICAL", "MAJOR", "MINOR", "WARNING"] as const;
export const STATUSES = ["ACTIVE", "ACKNOWLEDGED", "CLEARED"] as const;

export type Actor = { kind: "staff" | "client" | "system"; id: string };
type Done = { by: Actor; at: string; note: string } | null;

export type Alarm = {
  id: string;
  operator_id: string;
  location_id: string;
  device_id: string | null;
  subject: string;
  kind: string;
  severity: (typeof SEVERITIES)[number];
  status: (typeof STATUSES)[number];
  occurrences: number;
  raised_at: string;
  last_occurred_at: string;
  acknowledged: Done;
  assignee: Actor | null;
  cleared: Done;
  details: Record<string, unknown>;
};

export type AlarmChange = {
  action: string;
  by: Actor;
  at: string;
  note: string;
  assignee?: Actor | null;
  status: Alarm["status"];
};

export type StaffNames = Record<string, string>;

/** `operator_id`: the operator a superadmin reads (staff of an operator always read their own). */
export type AlarmFilters = {
  status: string;
  severity: string;
  location: string;
  device: string;
  operator_id: string;
};

export function listAlarms(f: AlarmFilters): Promise<{ data: Alarm[]; staff: StaffNames }> {
  const q = new URLSearchParams(Object.entries(f).filter(([, v]) => v !== ""));
  const query = q.size ? `?${q}` : "";
  return call("GET", `/console/api/alarms${query}`);
}

/** The path of one alarm, naming its operator (which a superadmin must). */
const alarmPath = (a: Pick<Alarm, "id" | "operator_id">, action = "") =>
  `/console/api/alarms/${encodeURIComponent(a.id)}${action}?operator_id=${encodeURIComponent(a.operator_id)}`;

export function alarmHistory(
  a: Pick<Alarm, "id" | "operator_id">,
): Promise<{ alarm: Alarm; history: AlarmChange[]; staff: StaffNames }> {
  return call("GET", alarmPath(a));
}

export type AlarmAction = "acknowledge" | "assign" | "clear";

/** Acknowledge or clear with a note; assign to a staff member's email (empty: to nobody). */
export function actOnAlarm(a: Alarm, action: AlarmAction, text: string): Promise<Alarm> {
  const body = action === "assign" ? { assignee: text.trim() === "" ? null : text.trim() } : { note: text };
  return call("POST", alarmPath(a, `/${action}`), body);
}

/** Who an actor is, for people: a staff member's email, else its kind and id. */
export function actorName(a: Actor | null, staff: StaffNames): string {
  if (!a) return "";
  if (a.kind === "staff") return staff[a.id] ?? `staff ${a.id}`;
  return a.kind === "system" ? "the cloud" : `${a.kind} ${a.id}`;
}
