import type { Logger } from "pino";
import type { Clock } from "../../shared/time/clock.ts";
import { every } from "../../shared/time/every.ts";
import type { Db } from "../store/db.ts";

/**
 * How long a copy of an outbox message may take to reach the cloud after the gateway published it (broker
 * queues, a replica catching up). A checkpoint is used only once it is this old.
 */
export const APPLIED_SEQS_RETENTION_MS = 7 * 24 * 3_600_000;

/**
 * Forgets `applied_seqs` rows no copy of which can arrive any more (docs/decisions/wire.md):
 * for each outbox, the rows below a position it reported at least `retentionMs` ago. The outbox had deleted
 * those rows before it said so and never sends them again, and every copy it published earlier has arrived
 * by now. Rows that named no outbox ('') go below the highest such checkpoint of the gateway: they were
 * numbered in the same sequence by the store that later took an identity, or by a store that is gone. A used
 * checkpoint moves up to the outbox's latest report. Deleting is idempotent, so replicas may run it side by
 * side.
 */
export function createAppliedSeqsPruner(deps: {
  db: Db;
  clock: Clock;
  log: Logger;
  everyMs?: number;
  retentionMs?: number;
}) {
  const { db, clock, log } = deps;
  const retentionMs = deps.retentionMs ?? APPLIED_SEQS_RETENTION_MS;

  async function deleteBelow(gatewayId: string, outboxId: string, seq: number): Promise<number> {
    const res = await db
      .deleteFrom("applied_seqs")
      .where("gateway_id", "=", gatewayId)
      .where("outbox_id", "=", outboxId)
      .where("seq", "<", seq)
      .executeTakeFirst();
    return Number(res.numDeletedRows);
  }

  /** One round at the clock's now; returns how many rows it deleted. */
  async function prune(): Promise<number> {
    const cutoff = new Date(clock.now().getTime() - retentionMs).toISOString();
    const due = await db
      .selectFrom("gateway_outboxes")
      .select(["gateway_id", "outbox_id", "checkpoint_from"])
      .where("checkpoint_at", "<=", cutoff)
      .execute();
    let deleted = 0;
    const unnamed = new Map<string, number>();
    for (const o of due) {
      deleted += await deleteBelow(o.gateway_id, o.outbox_id, o.checkpoint_from);
      unnamed.set(o.gateway_id, Math.max(unnamed.get(o.gateway_id) ?? 0, o.checkpoint_from));
      // The latest report becomes the next checkpoint, used once it is old enough in turn.
      await db
        .updateTable("gateway_outboxes")
        .set((eb) => ({ checkpoint_from: eb.ref("unconfirmed_from"), checkpoint_at: eb.ref("reported_at") }))
        .where("gateway_id", "=", o.gateway_id)
        .where("outbox_id", "=", o.outbox_id)
        .execute();
    }
    for (const [gatewayId, seq] of unnamed) deleted += await deleteBelow(gatewayId, "", seq);
    if (deleted > 0) log.info({ deleted, outboxes: due.length }, "applied outbox seqs pruned");
    return deleted;
  }

  const rounds = every(clock, deps.everyMs ?? 3_600_000, prune, (err) =>
    log.error({ err }, "applied seqs pruning failed"),
  );
  return { prune, start: rounds.start, stop: rounds.stop };
}
