import type { z } from "zod";
import { type ErrorCode, isAppError } from "../../shared/api/errors.ts";
import type { BatchItemFailure } from "../../shared/api/whitelist.ts";
import type { Db } from "../store/db.ts";

/** A failed item as the route lists it in `error_results`, with the item as sent. */
export type ItemFailure = BatchItemFailure & { item: unknown };

/** How one kind of item is read and applied. */
export type BatchSteps<T> = {
  /** The item's schema for the batch's operation. */
  schema: z.ZodType<T>;
  /** The code of a schema failure (a bad card id has its own). */
  invalidCode: (issues: z.core.$ZodIssue[]) => ErrorCode;
  /**
   * Applies one valid item in its own transaction; returns the gateways whose keys changed. An AppError
   * fails the item alone (its transaction rolls back); any other error stops the batch (500).
   */
  apply: (trx: Db, item: T) => Promise<string[]>;
};

/** "status: EXPIRED is read-only …; colour: unknown field" — each problem by its field within the item. */
function describeIssues(issues: z.core.$ZodIssue[]): string {
  const parts = issues.flatMap((i) => {
    const field = i.path.map(String).join(".");
    if (i.code === "unrecognized_keys")
      return i.keys.map((k) => `${[field, k].filter(Boolean).join(".")}: unknown field`);
    return [`${field || "item"}: ${i.message}`];
  });
  return [...new Set(parts)].join("; ");
}

const idOf = (raw: unknown): string =>
  typeof raw === "object" && raw !== null && typeof (raw as { id?: unknown }).id === "string"
    ? (raw as { id: string }).id
    : "";

/**
 * Spec (Whitelist rules 1 and 2): items are processed one by one, each in its own transaction, and a
 * success is never rolled back because a later item failed. Returns the failed items and the gateways
 * whose key sets changed; `changed` also collects those of a batch stopped by an unexpected error, so the
 * caller can still tell them what committed.
 */
export async function runBatch<T>(
  db: Db,
  items: readonly unknown[],
  steps: BatchSteps<T>,
  changed: Set<string>,
): Promise<ItemFailure[]> {
  const failures: ItemFailure[] = [];
  for (const [index, raw] of items.entries()) {
    const fail = (error_code: string, error_message: string) =>
      failures.push({ index, id: idOf(raw), error_code, error_message, item: raw });
    const parsed = steps.schema.safeParse(raw);
    if (!parsed.success) {
      fail(steps.invalidCode(parsed.error.issues), describeIssues(parsed.error.issues));
      continue;
    }
    try {
      const gateways = await db.transaction().execute((trx) => steps.apply(trx, parsed.data));
      for (const g of gateways) changed.add(g);
    } catch (err) {
      if (!isAppError(err)) throw err;
      fail(err.code, err.message);
    }
  }
  return failures;
}
