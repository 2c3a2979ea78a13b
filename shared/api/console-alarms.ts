import type { AlarmKind } from "../domain/alarm-kinds.ts";
import type { AlarmActor, AlarmChange, AlarmLife, AlarmSeverity } from "../domain/alarm-machine.ts";

/**
 * What the console's alarm routes answer (cloud/http/routes/console-alarms.ts), typed once for the cloud
 * that builds it (the alarm service's records) and the console that reads it; zod-free, so the console's
 * bundle stays small.
 */

export type { AlarmActor, AlarmChange };

/** An alarm: its subject and kind, and its lifecycle (shared/domain/alarm-machine.ts). */
export type ConsoleAlarm = AlarmLife & {
  id: string;
  operator_id: string;
  location_id: string;
  device_id: string | null;
  subject: string;
  kind: AlarmKind;
  severity: AlarmSeverity;
  details: Record<string, unknown>;
  version: number;
};

/** Staff ids are opaque in alarms; each answer carries the operator's staff by id, so the inbox shows emails. */
export type StaffNames = Record<string, string>;

/** GET /console/api/alarms. */
export type ConsoleAlarmList = { data: ConsoleAlarm[]; staff: StaffNames };

/** GET /console/api/alarms/{id}: the alarm and its history, oldest first. */
export type ConsoleAlarmDetail = { alarm: ConsoleAlarm; history: AlarmChange[]; staff: StaffNames };
