import Database from "better-sqlite3";
import { sql } from "kysely";
import type { Db } from "../../cloud/store/db.ts";

/** A gateway's outbox as its own store holds it: its identity, the last seq it gave, rows not yet confirmed. */
export type OutboxLedger = { gateway: string; outboxId: string; lastSeq: number; pending: number };

/** Reads a gateway's outbox from its SQLite file, beside the running daemon (WAL: readers do not block). */
export function readOutboxLedger(gateway: string, file: string): OutboxLedger {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    const { outbox_id } = db.prepare("SELECT outbox_id FROM outbox_identity").get() as { outbox_id: string };
    const last = db.prepare("SELECT seq FROM sqlite_sequence WHERE name = 'outbox'").get() as
      | { seq: number }
      | undefined;
    const { n } = db.prepare("SELECT count(*) AS n FROM outbox").get() as { n: number };
    return { gateway, outboxId: outbox_id, lastSeq: last?.seq ?? 0, pending: n };
  } finally {
    db.close();
  }
}

/** The cloud's tables that keep one row per applied outbox message of their kind. */
const ONE_ROW_PER_MESSAGE = ["hardware_events", "access_events"] as const;

/**
 * Every message a gateway committed reaches the cloud exactly once: once the world ran quiet, each outbox
 * is empty (the cloud confirmed every row), the cloud holds an applied mark for every seq the outbox ever
 * gave, and no message left two rows where it leaves one (a redelivery applied again).
 */
export async function deliveredExactlyOnce(db: Db, ledgers: OutboxLedger[]): Promise<string[]> {
  const failures: string[] = [];
  for (const l of ledgers) {
    if (l.pending > 0)
      failures.push(`${l.gateway}: ${l.pending} outbox messages still unconfirmed after the world ran quiet`);
    const applied = await db
      .selectFrom("applied_seqs")
      .select("seq")
      .where("gateway_id", "=", l.gateway)
      .where("outbox_id", "=", l.outboxId)
      .execute();
    const seqs = new Set(applied.map((r) => r.seq));
    const missing: number[] = [];
    for (let s = 1; s <= l.lastSeq; s++) if (!seqs.has(s)) missing.push(s);
    if (missing.length > 0)
      failures.push(
        `${l.gateway}: outbox seqs ${missing.slice(0, 10).join(", ")} never applied by the cloud`,
      );
  }
  for (const table of ONE_ROW_PER_MESSAGE) {
    const twice = await sql<{ gateway_id: string; seq: number; n: number }>`
      SELECT gateway_id, seq, count(*) AS n FROM ${sql.table(table)}
      GROUP BY gateway_id, outbox_id, seq HAVING count(*) > 1 ORDER BY gateway_id, seq`.execute(db);
    for (const r of twice.rows)
      failures.push(`${table}: message ${r.gateway_id}/${r.seq} applied ${r.n} times`);
  }
  return failures;
}
