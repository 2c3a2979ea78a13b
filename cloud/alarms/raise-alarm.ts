import { randomUUID } from "node:crypto";
import {
  ALARM_SEVERITY,
  type AlarmKind,
  type AlarmSubject,
  subjectKey,
} from "../../shared/domain/alarm-kinds.ts";
import { type AlarmAction, moveAlarm, raiseAlarm, SYSTEM_ACTOR } from "../../shared/domain/alarm-machine.ts";
import type { Executor } from "../store/db.ts";
import { type AlarmRecord, alarmRepository } from "./alarm-repository.ts";

/** Writers racing on one alarm retry this often before giving up (each retry reads what won). */
const MAX_ATTEMPTS = 5;

/** A site event that raises an alarm, as the transaction that records it knows it. */
export type AlarmOccurrence = {
  operatorId: string;
  locationId: string;
  deviceId: string | null;
  subject: AlarmSubject;
  kind: AlarmKind;
  /** What the event's webhook tells (`details`). */
  details: Record<string, unknown>;
  /** The cloud's clock. */
  now: Date;
};

/**
 * Keeps the alarm of a site event, in the transaction that records the event (so its webhook and its
 * alarm never disagree): a new ACTIVE alarm, or one more occurrence of the open alarm of the same kind on
 * the same subject, with the latest details.
 */
export async function raiseStoredAlarm(tx: Executor, o: AlarmOccurrence): Promise<void> {
  const repo = alarmRepository(tx);
  const subject = subjectKey(o.subject);
  const at = o.now.toISOString();
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const open = await repo.findOpen(o.kind, subject);
    if (open) {
      if (await change(tx, open, { kind: "occur" }, at, o.details)) return;
      continue;
    }
    const { life, change: raised } = raiseAlarm(SYSTEM_ACTOR, at);
    const alarm: AlarmRecord = {
      id: randomUUID(),
      operator_id: o.operatorId,
      location_id: o.locationId,
      device_id: o.deviceId,
      subject,
      kind: o.kind,
      severity: ALARM_SEVERITY[o.kind],
      details: o.details,
      version: 1,
      ...life,
    };
    if (await repo.insert(alarm, raised)) return;
  }
  throw new Error(`alarm ${o.kind} on ${subject}: too many concurrent writers`);
}

/**
 * Clears the open alarm of `kind` on `subject` as the system, when what it was about is over (a device
 * back online, a door closed), in the transaction that notices it; nothing when none is open.
 */
export async function clearStoredAlarm(
  tx: Executor,
  c: { kind: AlarmKind; subject: AlarmSubject; note: string; now: Date },
): Promise<void> {
  const repo = alarmRepository(tx);
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const open = await repo.findOpen(c.kind, subjectKey(c.subject));
    if (!open) return;
    if (await change(tx, open, { kind: "clear", note: c.note }, c.now.toISOString())) return;
  }
  throw new Error(`alarm ${c.kind} on ${subjectKey(c.subject)}: too many concurrent writers`);
}

/** One system change by compare-and-set: false when another writer came first. */
function change(
  tx: Executor,
  alarm: AlarmRecord,
  action: AlarmAction,
  at: string,
  details: Record<string, unknown> = alarm.details,
): Promise<boolean> {
  const move = moveAlarm(alarm, action, SYSTEM_ACTOR, at);
  // An open alarm takes both a repeat and a clear.
  if (!move.ok) return Promise.reject(new Error(move.message));
  return alarmRepository(tx).compareAndSet({ ...alarm, ...move.life, details }, alarm.version, move.change);
}
