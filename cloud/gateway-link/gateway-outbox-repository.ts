import type { Db } from "../store/db.ts";
import type { AppliedSeqsTable, GatewayOutboxesTable } from "../store/schema.ts";

export type AppliedSeq = Pick<AppliedSeqsTable, "outbox_id" | "seq">;
export type OutboxPosition = GatewayOutboxesTable;

/**
 * What the cloud knows of each gateway's outboxes: the (gateway, outbox, seq) of every message applied
 * (the dedup rows) and where each outbox last said it stands.
 */
export function gatewayOutboxRepository(db: Db) {
  return {
    /** Records a message as applied; false when it already was (a duplicate). */
    async markApplied(gatewayId: string, outboxId: string, seq: number, at: string): Promise<boolean> {
      const res = await db
        .insertInto("applied_seqs")
        .values({ gateway_id: gatewayId, outbox_id: outboxId, seq, applied_at: at })
        .onConflict((oc) => oc.columns(["gateway_id", "outbox_id", "seq"]).doNothing())
        .executeTakeFirst();
      return res.numInsertedOrUpdatedRows !== 0n;
    },

    /** The gateway's applied messages, by outbox and then seq. */
    appliedOf(gatewayId: string): Promise<AppliedSeq[]> {
      return db
        .selectFrom("applied_seqs")
        .select(["outbox_id", "seq"])
        .where("gateway_id", "=", gatewayId)
        .orderBy("outbox_id")
        .orderBy("seq")
        .execute();
    },

    /** Forgets the outbox's applied seqs below `seq`; returns how many. */
    async forgetAppliedBelow(gatewayId: string, outboxId: string, seq: number): Promise<number> {
      const res = await db
        .deleteFrom("applied_seqs")
        .where("gateway_id", "=", gatewayId)
        .where("outbox_id", "=", outboxId)
        .where("seq", "<", seq)
        .executeTakeFirst();
      return Number(res.numDeletedRows);
    },

    /**
     * Keeps what a gateway's outbox says in its heartbeat: every seq below `unconfirmed_from` was confirmed,
     * deleted and is never sent again. Only a higher value is written (a heartbeat is QoS 0, and replicas
     * may apply two out of order; a lower one says less), with when it was first reported; an unchanged one
     * writes nothing. A new outbox starts its checkpoint at its first report.
     */
    async recordPosition(
      gatewayId: string,
      outbox: { id: string; unconfirmed_from: number },
      at: string,
    ): Promise<void> {
      await db
        .insertInto("gateway_outboxes")
        .values({
          gateway_id: gatewayId,
          outbox_id: outbox.id,
          unconfirmed_from: outbox.unconfirmed_from,
          reported_at: at,
          checkpoint_from: outbox.unconfirmed_from,
          checkpoint_at: at,
        })
        .onConflict((oc) =>
          oc
            .columns(["gateway_id", "outbox_id"])
            .doUpdateSet((eb) => ({
              unconfirmed_from: eb.ref("excluded.unconfirmed_from"),
              reported_at: eb.ref("excluded.reported_at"),
            }))
            .where((eb) => eb("excluded.unconfirmed_from", ">", eb.ref("gateway_outboxes.unconfirmed_from"))),
        )
        .execute();
    },

    /** Every outbox position, by gateway and outbox. */
    positions(): Promise<OutboxPosition[]> {
      return db
        .selectFrom("gateway_outboxes")
        .selectAll()
        .orderBy("gateway_id")
        .orderBy("outbox_id")
        .execute();
    },

    /** The outboxes whose checkpoint was reported at or before `cutoff`. */
    checkpointsDue(
      cutoff: string,
    ): Promise<Pick<OutboxPosition, "gateway_id" | "outbox_id" | "checkpoint_from">[]> {
      return db
        .selectFrom("gateway_outboxes")
        .select(["gateway_id", "outbox_id", "checkpoint_from"])
        .where("checkpoint_at", "<=", cutoff)
        .execute();
    },

    /** The outbox's latest report becomes its checkpoint. */
    async advanceCheckpoint(gatewayId: string, outboxId: string): Promise<void> {
      await db
        .updateTable("gateway_outboxes")
        .set((eb) => ({ checkpoint_from: eb.ref("unconfirmed_from"), checkpoint_at: eb.ref("reported_at") }))
        .where("gateway_id", "=", gatewayId)
        .where("outbox_id", "=", outboxId)
        .execute();
    },
  };
}

export type GatewayOutboxRepository = ReturnType<typeof gatewayOutboxRepository>;
