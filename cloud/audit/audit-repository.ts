import type { Executor } from "../store/db.ts";
import { fromJson, toJson } from "../store/json-column.ts";
import type { AuditLogTable, FieldChanges } from "../store/tables/audit-tables.ts";

/** Who acted, opaque to the log: `{ kind: "api_client", id: client_id }`, a rider, staff, the system. */
export type Actor = { kind: string; id: string };

/** One audit log entry as the log speaks of it. */
export type AuditEntry = {
  id: string;
  operator_id: string;
  at: string;
  actor: Actor;
  action: string;
  subject: { type: string; id: string };
  reason: string | null;
  comment: string | null;
  changes: FieldChanges;
  correlation_id: string | null;
};

/** What a listing keeps: each given filter must match; `from` inclusive, `before` exclusive. */
export type AuditFilters = {
  actor?: Partial<Actor>;
  subject?: { type: string; id?: string };
  action?: string;
  from?: string;
  before?: string;
};

/** Where the previous page ended (its last entry's time and id), newest first. */
export type AuditCursor = { at: string; id: string };

function toEntry(row: AuditLogTable): AuditEntry {
  return {
    id: row.id,
    operator_id: row.operator_id,
    at: row.at,
    actor: { kind: row.actor_kind, id: row.actor_id },
    action: row.action,
    subject: { type: row.subject_type, id: row.subject_id },
    reason: row.reason,
    comment: row.comment,
    changes: fromJson(row.changes),
    correlation_id: row.correlation_id,
  };
}

export function auditRepository(db: Executor) {
  return {
    async insert(e: AuditEntry): Promise<void> {
      await db
        .insertInto("audit_log")
        .values({
          id: e.id,
          operator_id: e.operator_id,
          at: e.at,
          actor_kind: e.actor.kind,
          actor_id: e.actor.id,
          action: e.action,
          subject_type: e.subject.type,
          subject_id: e.subject.id,
          reason: e.reason,
          comment: e.comment,
          changes: toJson(e.changes),
          correlation_id: e.correlation_id,
        })
        .execute();
    },

    /** The operator's entries matching `f`, newest first (ties by id), after `cursor`, at most `limit`. */
    async list(
      operatorId: string,
      f: AuditFilters,
      page: { limit: number; after?: AuditCursor },
    ): Promise<AuditEntry[]> {
      let q = db.selectFrom("audit_log").selectAll().where("operator_id", "=", operatorId);
      if (f.actor?.kind !== undefined) q = q.where("actor_kind", "=", f.actor.kind);
      if (f.actor?.id !== undefined) q = q.where("actor_id", "=", f.actor.id);
      if (f.subject) q = q.where("subject_type", "=", f.subject.type);
      if (f.subject?.id !== undefined) q = q.where("subject_id", "=", f.subject.id);
      if (f.action !== undefined) q = q.where("action", "=", f.action);
      if (f.from !== undefined) q = q.where("at", ">=", f.from);
      if (f.before !== undefined) q = q.where("at", "<", f.before);
      const after = page.after;
      if (after) {
        q = q.where((eb) =>
          eb.or([eb("at", "<", after.at), eb.and([eb("at", "=", after.at), eb("id", "<", after.id)])]),
        );
      }
      const rows = await q.orderBy("at", "desc").orderBy("id", "desc").limit(page.limit).execute();
      return rows.map(toEntry);
    },
  };
}

export type AuditRepository = ReturnType<typeof auditRepository>;
