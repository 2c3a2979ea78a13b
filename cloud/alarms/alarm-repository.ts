import type { ConsoleAlarm } from "../../shared/api/console-alarms.ts";
import type { AlarmKind } from "../../shared/domain/alarm-kinds.ts";
import type { AlarmChange, AlarmSeverity, AlarmStatus } from "../../shared/domain/alarm-machine.ts";
import type { Executor } from "../store/db.ts";
import { fromJson, toJson } from "../store/json-column.ts";
import type { AlarmsTable } from "../store/tables/alarm-tables.ts";

/**
 * An alarm as the cloud handles it: its subject and kind, and its lifecycle (shared/domain/alarm-machine.ts);
 * what the console's routes answer, so typed once for both (shared/api/console-alarms.ts).
 */
export type AlarmRecord = ConsoleAlarm;

/** Which of an operator's alarms to list; every filter given must hold. */
export type AlarmFilter = {
  status?: readonly AlarmStatus[];
  severity?: readonly AlarmSeverity[];
  location_id?: string;
  device_id?: string;
  limit: number;
};

/** While open, an alarm holds this key; a unique index keeps one open alarm per kind and subject. */
export function openKey(kind: AlarmKind, subject: string): string {
  return `${kind} ${subject}`;
}

function toRecord(row: AlarmsTable): AlarmRecord {
  const { open_key: _, details, acknowledged, assignee, cleared, ...rest } = row;
  return {
    ...rest,
    details: fromJson(details),
    acknowledged: acknowledged === null ? null : fromJson(acknowledged),
    assignee: assignee === null ? null : fromJson(assignee),
    cleared: cleared === null ? null : fromJson(cleared),
  };
}

/** The columns a change writes: the lifecycle and the latest details. */
function lifeColumns(a: AlarmRecord) {
  return {
    status: a.status,
    open_key: a.status === "CLEARED" ? null : openKey(a.kind, a.subject),
    occurrences: a.occurrences,
    details: toJson(a.details),
    updated_at: a.updated_at,
    last_occurred_at: a.last_occurred_at,
    acknowledged: a.acknowledged === null ? null : toJson(a.acknowledged),
    assignee: a.assignee === null ? null : toJson(a.assignee),
    cleared: a.cleared === null ? null : toJson(a.cleared),
  };
}

export function alarmRepository(db: Executor) {
  const appendHistory = (alarmId: string, version: number, change: AlarmChange) =>
    db
      .insertInto("alarm_history")
      .values({ alarm_id: alarmId, version, change: toJson(change) })
      .execute();

  return {
    /** The open alarm of this kind on this subject, if any. */
    async findOpen(kind: AlarmKind, subject: string): Promise<AlarmRecord | undefined> {
      const row = await db
        .selectFrom("alarms")
        .selectAll()
        .where("open_key", "=", openKey(kind, subject))
        .executeTakeFirst();
      return row && toRecord(row);
    },

    /** The subjects of every open alarm of `kind`, of every operator (the system's clears look them up). */
    async openSubjects(kind: AlarmKind): Promise<string[]> {
      const rows = await db
        .selectFrom("alarms")
        .select("subject")
        .where("kind", "=", kind)
        .where("open_key", "is not", null)
        .execute();
      return rows.map((r) => r.subject);
    },

    /** Another operator's alarm is exactly as missing as one that does not exist. */
    async findForOperator(operatorId: string, id: string): Promise<AlarmRecord | undefined> {
      const row = await db
        .selectFrom("alarms")
        .selectAll()
        .where("id", "=", id)
        .where("operator_id", "=", operatorId)
        .executeTakeFirst();
      return row && toRecord(row);
    },

    /**
     * Keeps a new alarm (its version 1) and its first history entry; false, writing nothing, when an
     * alarm of its kind on its subject is open already (another writer raised it first).
     */
    async insert(a: AlarmRecord, change: AlarmChange): Promise<boolean> {
      const { id, operator_id, location_id, device_id, subject, kind, severity, raised_at } = a;
      const res = await db
        .insertInto("alarms")
        .values({
          ...{ id, operator_id, location_id, device_id, subject, kind, severity, raised_at },
          ...lifeColumns(a),
          version: 1,
        })
        .onConflict((oc) => oc.column("open_key").doNothing())
        .executeTakeFirst();
      if (res.numInsertedOrUpdatedRows === 0n) return false;
      await appendHistory(id, 1, change);
      return true;
    },

    /**
     * Writes `next` and its history entry only if the alarm is still at `version`: false, writing nothing,
     * when another change came first.
     */
    async compareAndSet(next: AlarmRecord, version: number, change: AlarmChange): Promise<boolean> {
      const res = await db
        .updateTable("alarms")
        .set({ ...lifeColumns(next), version: version + 1 })
        .where("id", "=", next.id)
        .where("version", "=", version)
        .executeTakeFirst();
      if (res.numUpdatedRows === 0n) return false;
      await appendHistory(next.id, version + 1, change);
      return true;
    },

    /** Every change of the alarm, oldest first. */
    async history(alarmId: string): Promise<AlarmChange[]> {
      const rows = await db
        .selectFrom("alarm_history")
        .select("change")
        .where("alarm_id", "=", alarmId)
        .orderBy("version")
        .execute();
      return rows.map((r) => fromJson(r.change));
    },

    /** The operator's alarms that pass the filter, newest raised first. */
    async list(operatorId: string, f: AlarmFilter): Promise<AlarmRecord[]> {
      let q = db.selectFrom("alarms").selectAll().where("operator_id", "=", operatorId);
      if (f.status?.length) q = q.where("status", "in", f.status);
      if (f.severity?.length) q = q.where("severity", "in", f.severity);
      if (f.location_id !== undefined) q = q.where("location_id", "=", f.location_id);
      if (f.device_id !== undefined) q = q.where("device_id", "=", f.device_id);
      const rows = await q.orderBy("raised_at", "desc").orderBy("id", "desc").limit(f.limit).execute();
      return rows.map(toRecord);
    },
  };
}

export type AlarmRepository = ReturnType<typeof alarmRepository>;
