import type { Json } from "../json-column.ts";

/** Store tables of the audit log (see cloud/store/schema.ts for the conventions; docs/decisions/audit.md). */

/** What a field was and became: `{ field: { from, to } }`. */
export type FieldChanges = Record<string, { from: unknown; to: unknown }>;

/** One action a caller took that changed something, recorded in the change's transaction. */
export interface AuditLogTable {
  id: string;
  operator_id: string;
  /** When the cloud applied it (the cloud's clock). */
  at: string;
  /** Who acted, opaque to the log: an API client, a rider, staff, the system. */
  actor_kind: string;
  actor_id: string;
  /** What was done, e.g. `command.force-unlock`, `location.patch`, `session.end`. */
  action: string;
  subject_type: string;
  subject_id: string;
  reason: string | null;
  comment: string | null;
  changes: Json<FieldChanges>;
  /** The request's correlation id, when a request did it. */
  correlation_id: string | null;
}

export interface AuditTables {
  audit_log: AuditLogTable;
}
