import type { FastifyInstance } from "fastify";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import { ErrorBody } from "../../../shared/api/common.ts";
import { ConsoleAuditPage, ConsoleAuditQuery } from "../../../shared/api/console-audit.ts";
import { type AuditQuery, listAudit } from "../../audit/audit-log.ts";
import type { AuditEntry } from "../../audit/audit-repository.ts";
import { operatorFor, staffPrincipal } from "../../staff/staff-principal.ts";
import { staffRepository } from "../../staff/staff-repository.ts";
import type { Db } from "../../store/db.ts";
import { staffSessionOf } from "../console-guard.ts";
import { ANY_ROUTE_ERRORS } from "../error-responses.ts";

const errors = { ...ANY_ROUTE_ERRORS, 401: ErrorBody, 403: ErrorBody };

/** Instants as the log stores them (UTC, milliseconds), so a range compares as the entries' times do. */
const utc = (t: string | undefined) => (t === undefined ? undefined : new Date(t).toISOString());

/** The console's audit log (docs/decisions/console.md): every role of the operator reads it. */
export function registerConsoleAuditRoutes(app: FastifyInstance, db: Db) {
  const r = app.withTypeProvider<ZodTypeProvider>();

  /** Staff actors' emails: the log keeps ids only, and an account may since be gone (null). */
  async function named(entries: AuditEntry[]) {
    const ids = [...new Set(entries.filter((e) => e.actor.kind === "staff").map((e) => e.actor.id))];
    const staff = staffRepository(db);
    const emails = new Map(
      await Promise.all(ids.map(async (id) => [id, (await staff.find(id))?.email] as const)),
    );
    return entries.map((e) => ({
      id: e.id,
      at: e.at,
      actor: { ...e.actor, name: emails.get(e.actor.id) ?? null },
      action: e.action,
      subject: e.subject,
      reason: e.reason,
      comment: e.comment,
      changes: e.changes,
    }));
  }

  r.get("/console/api/audit", {
    // Bearer tokens do not apply: the console guard reads the session cookie.
    config: { public: true },
    schema: { hide: true, querystring: ConsoleAuditQuery, response: { 200: ConsoleAuditPage, ...errors } },
    handler: async (request) => {
      const signed = staffSessionOf(request);
      const q = request.query;
      const { operatorId } = staffPrincipal(signed, operatorFor(signed, q.operator_id), "read");
      const query: AuditQuery = {
        ...(q.actor_kind || q.actor_id
          ? {
              actor: {
                ...(q.actor_kind ? { kind: q.actor_kind } : {}),
                ...(q.actor_id ? { id: q.actor_id } : {}),
              },
            }
          : {}),
        ...(q.subject_type
          ? { subject: { type: q.subject_type, ...(q.subject_id ? { id: q.subject_id } : {}) } }
          : {}),
        ...(q.action ? { action: q.action } : {}),
        ...(q.from ? { from: utc(q.from) } : {}),
        ...(q.before ? { before: utc(q.before) } : {}),
        ...(q.limit ? { limit: q.limit } : {}),
        ...(q.cursor ? { cursor: q.cursor } : {}),
      };
      const page = await listAudit(db, operatorId, query);
      return { data: await named(page.data), next_cursor: page.next_cursor };
    },
  });
}
