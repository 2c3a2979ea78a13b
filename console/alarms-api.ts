import type {
  AlarmActor as Actor,
  ConsoleAlarm as Alarm,
  ConsoleAlarmDetail,
  ConsoleAlarmList,
  StaffNames,
} from "../shared/api/console-alarms.ts";
import { call } from "./api.ts";

/** The alarm inbox's calls (cloud/http/routes/console-alarms.ts); the answers' types: shared/api/console-alarms.ts. */

export type { AlarmChange, ConsoleAlarm as Alarm, StaffNames } from "../shared/api/console-alarms.ts";
export {
  ALARM_SEVERITIES as SEVERITIES,
  ALARM_STATUSES as STATUSES,
} from "../shared/domain/alarm-machine.ts";

/** `operator_id`: the operator a superadmin reads (staff of an operator always read their own). */
export type AlarmFilters = {
  status: string;
  severity: string;
  location: string;
  device: string;
  operator_id: string;
};

export function listAlarms(f: AlarmFilters): Promise<ConsoleAlarmList> {
  const q = new URLSearchParams(Object.entries(f).filter(([, v]) => v !== ""));
  const query = q.size ? `?${q}` : "";
  return call("GET", `/console/api/alarms${query}`);
}

/** The path of one alarm, naming its operator (which a superadmin must). */
const alarmPath = (a: Pick<Alarm, "id" | "operator_id">, action = "") =>
  `/console/api/alarms/${encodeURIComponent(a.id)}${action}?operator_id=${encodeURIComponent(a.operator_id)}`;

export function alarmHistory(a: Pick<Alarm, "id" | "operator_id">): Promise<ConsoleAlarmDetail> {
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
