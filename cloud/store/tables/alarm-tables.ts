/** Store tables of the alarm inbox (see cloud/store/schema.ts for the conventions; migration 022). */

import type { AlarmKind } from "../../../shared/domain/alarm-kinds.ts";
import type {
  AlarmActor,
  AlarmChange,
  AlarmLife,
  AlarmSeverity,
  AlarmStatus,
} from "../../../shared/domain/alarm-machine.ts";
import type { Json } from "../json-column.ts";

export interface AlarmsTable {
  id: string;
  operator_id: string;
  location_id: string;
  device_id: string | null;
  /** What the alarm is about: `device:<id>`, `gateway:<id>` or `location:<id>`. */
  subject: string;
  kind: AlarmKind;
  severity: AlarmSeverity;
  status: AlarmStatus;
  /** `<kind> <subject>` while open, null once cleared (unique: one open alarm per kind and subject). */
  open_key: string | null;
  occurrences: number;
  /** What the latest occurrence's site event told (its webhook `details`). */
  details: Json<Record<string, unknown>>;
  raised_at: string;
  updated_at: string;
  last_occurred_at: string;
  acknowledged: Json<NonNullable<AlarmLife["acknowledged"]>> | null;
  assignee: Json<AlarmActor> | null;
  cleared: Json<NonNullable<AlarmLife["cleared"]>> | null;
  /** Grows with every change; a write checks it (compare-and-set). */
  version: number;
}

/** Every change of an alarm, numbered by the alarm's version after it. */
export interface AlarmHistoryTable {
  alarm_id: string;
  version: number;
  change: Json<AlarmChange>;
}

export interface AlarmTables {
  alarms: AlarmsTable;
  alarm_history: AlarmHistoryTable;
}
