import { AppError } from "../../shared/api/errors.ts";
import {
  type AlarmAction,
  type AlarmActor,
  type AlarmChange,
  type AlarmSeverity,
  type AlarmStatus,
  moveAlarm,
} from "../../shared/domain/alarm-machine.ts";
import type { Clock } from "../../shared/time/clock.ts";
import { fieldChanges, recordAudit } from "../audit/audit-log.ts";
import type { Db } from "../store/db.ts";
import { type AlarmRecord, alarmRepository } from "./alarm-repository.ts";

/** A list answers this many alarms unless asked for fewer, and never more than the most. */
export const DEFAULT_ALARM_LIMIT = 100;
export const MAX_ALARM_LIMIT = 500;
/** A note on an acknowledgement or a clear is for people: a few paragraphs at most. */
export const MAX_NOTE_LENGTH = 2_000;
/** Concurrent changes of one alarm retry this often; each retry reads what won and decides again. */
const MAX_ATTEMPTS = 5;

export type AlarmQuery = {
  status?: readonly AlarmStatus[];
  severity?: readonly AlarmSeverity[];
  location_id?: string;
  device_id?: string;
  limit?: number;
};

/**
 * The alarm inbox of an operator (docs/decisions/alarms.md): what the console's routes call. Every call
 * names the operator it acts for, and another operator's alarm is missing (404), as with every other
 * resource. Actions are checked by the lifecycle (shared/domain/alarm-machine.ts) and kept in the alarm's
 * history with who did them, so the history is the alarm's audit trail; each is also written to the audit
 * log in the same transaction (docs/decisions/audit.md), so the console's log names who acted on alarms too.
 */
export function createAlarmService(deps: { db: Db; clock: Clock }) {
  const { db, clock } = deps;

  function act(
    operatorId: string,
    id: string,
    action: AlarmAction,
    by: AlarmActor,
    correlationId?: string,
  ): Promise<AlarmRecord> {
    return db.transaction().execute(async (trx) => {
      if ("note" in action) checkNote(action.note);
      const repo = alarmRepository(trx);
      for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
        const alarm = await repo.findForOperator(operatorId, id);
        if (!alarm) throw new AppError("ERRORS.NOT_FOUND", `Alarm ${id} not found`);
        const move = moveAlarm(alarm, action, by, clock.now().toISOString());
        if (!move.ok) throw new AppError("ERRORS.BAD_REQUEST", move.message, { status: alarm.status });
        const next = { ...alarm, ...move.life };
        if (await repo.compareAndSet(next, alarm.version, move.change)) {
          await recordAudit(
            trx,
            { actor: by, ...(correlationId ? { correlationId } : {}) },
            {
              operatorId,
              action: `alarm.${action.kind}`,
              subject: { type: "alarm", id },
              comment: "note" in action ? action.note : null,
              changes: fieldChanges(alarm, next, ["status", "assignee"]),
            },
            clock.now(),
          );
          return { ...next, version: alarm.version + 1 };
        }
      }
      throw new AppError("ERRORS.SERVICE_UNAVAILABLE", `Alarm ${id} is changing too often; try again`);
    });
  }

  return {
    /** The operator's alarms that pass every filter given, newest raised first. */
    list(operatorId: string, q: AlarmQuery = {}): Promise<AlarmRecord[]> {
      const limit = q.limit ?? DEFAULT_ALARM_LIMIT;
      if (!Number.isInteger(limit) || limit < 1 || limit > MAX_ALARM_LIMIT)
        return Promise.reject(
          new AppError("ERRORS.VALIDATION_FAILED", `limit must be an integer from 1 to ${MAX_ALARM_LIMIT}`),
        );
      return alarmRepository(db).list(operatorId, { ...q, limit });
    },

    /** One alarm with every change it went through, oldest first. */
    async get(operatorId: string, id: string): Promise<{ alarm: AlarmRecord; history: AlarmChange[] }> {
      const repo = alarmRepository(db);
      const alarm = await repo.findForOperator(operatorId, id);
      if (!alarm) throw new AppError("ERRORS.NOT_FOUND", `Alarm ${id} not found`);
      return { alarm, history: await repo.history(id) };
    },

    acknowledge(
      operatorId: string,
      id: string,
      by: AlarmActor,
      note: string,
      correlationId?: string,
    ): Promise<AlarmRecord> {
      return act(operatorId, id, { kind: "acknowledge", note }, by, correlationId);
    },

    /** Gives the alarm to someone (null: to nobody) while it is open. */
    assign(
      operatorId: string,
      id: string,
      by: AlarmActor,
      assignee: AlarmActor | null,
      correlationId?: string,
    ): Promise<AlarmRecord> {
      return act(operatorId, id, { kind: "assign", assignee }, by, correlationId);
    },

    clear(
      operatorId: string,
      id: string,
      by: AlarmActor,
      note: string,
      correlationId?: string,
    ): Promise<AlarmRecord> {
      return act(operatorId, id, { kind: "clear", note }, by, correlationId);
    },
  };
}

export type AlarmService = ReturnType<typeof createAlarmService>;

function checkNote(note: string): void {
  if (note.length > MAX_NOTE_LENGTH)
    throw new AppError("ERRORS.VALIDATION_FAILED", `A note is at most ${MAX_NOTE_LENGTH} characters`);
}
