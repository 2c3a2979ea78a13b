import type { Logger } from "pino";
import type { Clock } from "../../shared/time/clock.ts";
import { every } from "../../shared/time/every.ts";
import type { Db } from "../store/db.ts";
import { gatewayOutboxRepository } from "./gateway-outbox-repository.ts";

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

  const outboxes = gatewayOutboxRepository(db);

  /** One round at the clock's now; returns how many rows it deleted. */
  async function prune(): Promise<number> {
    const cutoff = new Date(clock.now().getTime() - retentionMs).toISOString();
    const due = await outboxes.checkpointsDue(cutoff);
    let deleted = 0;
    const unnamed = new Map<string, number>();
    for (const o of due) {
      deleted += await outboxes.forgetAppliedBelow(o.gateway_id, o.outbox_id, o.checkpoint_from);
      unnamed.set(o.gateway_id, Math.max(unnamed.get(o.gateway_id) ?? 0, o.checkpoint_from));
      // The latest report becomes the next checkpoint, used once it is old enough in turn.
      await outboxes.advanceCheckpoint(o.gateway_id, o.outbox_id);
    }
    for (const [gatewayId, seq] of unnamed) deleted += await outboxes.forgetAppliedBelow(gatewayId, "", seq);
    if (deleted > 0) log.info({ deleted, outboxes: due.length }, "applied outbox seqs pruned");
    return deleted;
  }

  const rounds = every(clock, deps.everyMs ?? 3_600_000, prune, (err) =>
    log.error({ err }, "applied seqs pruning failed"),
  );
  return { prune, start: rounds.start, stop: rounds.stop };
}
