import type { PaymentStatus } from "../../shared/domain/payment-machine.ts";
import type { Executor } from "../store/db.ts";
import type { PaymentsTable } from "../store/tables/session-tables.ts";

export type PaymentRow = PaymentsTable;

/** One entry of a payment's change history. */
export type PaymentChange = {
  seq: number;
  from_status: PaymentStatus | null;
  to_status: PaymentStatus;
  actor: string;
  changed_at: string;
};

/** Payments and their change history: only this repository reads or writes their tables. */
export function paymentRepository(db: Executor) {
  const find = (id: string): Promise<PaymentRow | undefined> =>
    db.selectFrom("payments").selectAll().where("id", "=", id).executeTakeFirst();

  async function addChange(
    paymentId: string,
    from: PaymentStatus | null,
    to: PaymentStatus,
    actor: string,
    at: string,
  ) {
    const last = await db
      .selectFrom("payment_changes")
      .select((eb) => eb.fn.max("seq").as("seq"))
      .where("payment_id", "=", paymentId)
      .executeTakeFirst();
    await db
      .insertInto("payment_changes")
      .values({
        payment_id: paymentId,
        seq: Number(last?.seq ?? 0) + 1,
        from_status: from,
        to_status: to,
        actor,
        changed_at: at,
      })
      .execute();
  }

  return {
    find,

    findForOperator(operatorId: string, id: string): Promise<PaymentRow | undefined> {
      return db
        .selectFrom("payments")
        .selectAll()
        .where("id", "=", id)
        .where("operator_id", "=", operatorId)
        .executeTakeFirst();
    },

    /** The payment of each session that has one. */
    async ofSessions(sessionIds: readonly string[]): Promise<Map<string, PaymentRow>> {
      if (sessionIds.length === 0) return new Map();
      const rows = await db
        .selectFrom("payments")
        .selectAll()
        .where("session_id", "in", sessionIds)
        .execute();
      return new Map(rows.map((r) => [r.session_id, r]));
    },

    /** A new payment and the first entry of its history. */
    async open(row: PaymentRow, actor: string): Promise<void> {
      await db.insertInto("payments").values(row).execute();
      await addChange(row.id, null, row.status, actor, row.created_at);
    },

    /**
     * Moves the payment from `from` to `to` and records the change, only if its status is still `from`:
     * false when another writer came first.
     */
    async compareAndSetStatus(
      id: string,
      from: PaymentStatus,
      to: PaymentStatus,
      actor: string,
      now: Date,
    ): Promise<boolean> {
      const at = now.toISOString();
      const res = await db
        .updateTable("payments")
        .set({ status: to, updated_at: at })
        .where("id", "=", id)
        .where("status", "=", from)
        .executeTakeFirst();
      if (res.numUpdatedRows === 0n) return false;
      await addChange(id, from, to, actor, at);
      return true;
    },

    /** The payment's history, oldest first. */
    changesOf(paymentId: string): Promise<PaymentChange[]> {
      return db
        .selectFrom("payment_changes")
        .select(["seq", "from_status", "to_status", "actor", "changed_at"])
        .where("payment_id", "=", paymentId)
        .orderBy("seq")
        .execute();
    },
  };
}

export type PaymentRepository = ReturnType<typeof paymentRepository>;
