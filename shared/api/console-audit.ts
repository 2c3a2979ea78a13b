import { z } from "zod";

/** One audit entry as the console shows it; a staff actor is named by its email while it exists. */
export const ConsoleAuditEntry = z.object({
  id: z.string(),
  at: z.string(),
  actor: z.object({ kind: z.string(), id: z.string(), name: z.string().nullable() }),
  action: z.string(),
  subject: z.object({ type: z.string(), id: z.string() }),
  reason: z.string().nullable(),
  comment: z.string().nullable(),
  changes: z.record(z.string(), z.object({ from: z.unknown(), to: z.unknown() })),
});
export type ConsoleAuditEntry = z.infer<typeof ConsoleAuditEntry>;

export const ConsoleAuditPage = z.object({
  data: z.array(ConsoleAuditEntry),
  next_cursor: z.string().nullable(),
});
export type ConsoleAuditPage = z.infer<typeof ConsoleAuditPage>;

const Instant = z.iso.datetime({ offset: true });
const Name = z.string().min(1).max(200);

/** Filters of the console's audit list: actor, subject, action, a time range; a page at a time. */
export const ConsoleAuditQuery = z.strictObject({
  actor_kind: Name.optional(),
  actor_id: Name.optional(),
  subject_type: Name.optional(),
  subject_id: Name.optional(),
  action: Name.optional(),
  /** Inclusive. */
  from: Instant.optional(),
  /** Exclusive. */
  before: Instant.optional(),
  limit: z
    .string()
    .regex(/^\d+$/, "must be a whole number")
    .transform(Number)
    .pipe(z.number().int().min(1).max(200))
    .optional(),
  cursor: z.string().min(1).max(500).optional(),
  /** Which operator's log a superadmin reads; others read their own operator's. */
  operator_id: z.string().min(1).max(100).optional(),
});
export type ConsoleAuditQuery = z.infer<typeof ConsoleAuditQuery>;
