import type { Heartbeat } from "../../shared/wire/messages.ts";
import type { Executor } from "../store/db.ts";

/**
 * Keeps what a gateway's outbox says in its heartbeat: every seq below `unconfirmed_from` was confirmed,
 * deleted and is never sent again. Only a higher value is written (a heartbeat is QoS 0, and replicas may
 * apply two out of order; a lower one says less), with when it was first reported; an unchanged one writes
 * nothing. A new outbox starts its checkpoint at its first report.
 */
export async function recordOutboxPosition(
  db: Executor,
  gatewayId: string,
  outbox: NonNullable<Heartbeat["outbox"]>,
  now: Date,
): Promise<void> {
  const ts = now.toISOString();
  await db
    .insertInto("gateway_outboxes")
    .values({
      gateway_id: gatewayId,
      outbox_id: outbox.id,
      unconfirmed_from: outbox.unconfirmed_from,
      reported_at: ts,
      checkpoint_from: outbox.unconfirmed_from,
      checkpoint_at: ts,
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
}
