import { randomUUID } from "node:crypto";
import type { Principal } from "../auth/principal.ts";
import type { Db, Executor } from "../store/db.ts";
import type { FieldChanges } from "../store/tables/audit-tables.ts";
import { decodeAuditCursor, encodeAuditCursor } from "./audit-cursor.ts";
import { type Actor, type AuditEntry, type AuditFilters, auditRepository } from "./audit-repository.ts";

/**
 * The audit log: who changed what, when and why, written where the change happens (in the service, in
 * the change's transaction), so an action through the API and one through the console land in one log,
 * and a refused request, which changes nothing, records nothing (docs/decisions/audit.md).
 */

/** Who acts and the request that carried it, handed to a service by its caller. */
export type AuditOrigin = { actor: Actor; correlationId?: string };

/** What a caller changed, as the service that changed it describes it. */
export type AuditedAction = {
  operatorId: string;
  action: string;
  subject: { type: string; id: string };
  reason?: string | null;
  comment?: string | null;
  changes?: FieldChanges;
};

/** The actor a principal names: an integrator's API client, a rider, or a staff member in the console. */
export function actorOf(principal: Principal): Actor {
  switch (principal.kind) {
    case "client":
      return { kind: "api_client", id: principal.id };
    case "user":
      return { kind: "rider", id: principal.id };
    case "staff":
      return { kind: "staff", id: principal.id };
  }
}

/** The origin of a request made with `principal`'s token, with the request's correlation id. */
export function requestOrigin(principal: Principal, correlationId?: string): AuditOrigin {
  return { actor: actorOf(principal), ...(correlationId ? { correlationId } : {}) };
}

/** Records one entry at `now` (the cloud's clock), in the caller's transaction. */
export async function recordAudit(
  tx: Executor,
  origin: AuditOrigin,
  done: AuditedAction,
  now: Date,
): Promise<void> {
  await auditRepository(tx).insert({
    id: randomUUID(),
    operator_id: done.operatorId,
    at: now.toISOString(),
    actor: origin.actor,
    action: done.action,
    subject: done.subject,
    reason: done.reason ?? null,
    comment: done.comment ?? null,
    changes: done.changes ?? {},
    correlation_id: origin.correlationId ?? null,
  });
}

/** The fields of `fields` whose value differs between `before` and `after` (compared as JSON). */
export function fieldChanges(
  before: Record<string, unknown>,
  after: Record<string, unknown>,
  fields: Iterable<string>,
): FieldChanges {
  const out: FieldChanges = {};
  for (const field of fields) {
    const from = before[field] ?? null;
    const to = after[field] ?? null;
    if (JSON.stringify(from) !== JSON.stringify(to)) out[field] = { from, to };
  }
  return out;
}

export const DEFAULT_AUDIT_LIMIT = 50;
export const MAX_AUDIT_LIMIT = 200;

/** A listing: filters (actor, subject, action, `from` inclusive, `before` exclusive), page size, cursor. */
export type AuditQuery = AuditFilters & { limit?: number; cursor?: string };

export type AuditPage = { data: AuditEntry[]; next_cursor: string | null };

/**
 * The operator's entries, newest first, a page at a time: `next_cursor` (null on the last page) given back
 * with the same filters reads on; entries recorded meanwhile land before the cursor and never shift it.
 * Another operator's entries are never listed. A cursor of other filters is a 400.
 */
export async function listAudit(db: Db, operatorId: string, q: AuditQuery): Promise<AuditPage> {
  const limit = Math.min(Math.max(1, q.limit ?? DEFAULT_AUDIT_LIMIT), MAX_AUDIT_LIMIT);
  const filters: AuditFilters = {
    // Spelled out, so the cursor's fingerprint does not depend on the order the caller wrote them in.
    ...(q.actor ? { actor: { kind: q.actor.kind, id: q.actor.id } } : {}),
    ...(q.subject ? { subject: { type: q.subject.type, id: q.subject.id } } : {}),
    ...(q.action !== undefined ? { action: q.action } : {}),
    ...(q.from !== undefined ? { from: q.from } : {}),
    ...(q.before !== undefined ? { before: q.before } : {}),
  };
  const listing = JSON.stringify([operatorId, filters]);
  const after = q.cursor ? decodeAuditCursor(q.cursor, listing) : undefined;
  const rows = await auditRepository(db).list(operatorId, filters, {
    limit: limit + 1,
    ...(after ? { after } : {}),
  });
  const data = rows.slice(0, limit);
  const last = data.at(-1);
  return {
    data,
    next_cursor:
      rows.length > limit && last ? encodeAuditCursor({ at: last.at, id: last.id }, listing) : null,
  };
}
