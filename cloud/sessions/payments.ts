import { movePayment, type PaymentStatus } from "../../shared/domain/payment-machine.ts";
import type { Executor } from "../store/db.ts";
import type { PaymentsTable } from "../store/tables/session-tables.ts";
import { paymentProviderNamed } from "./payment-provider.ts";

const MAX_CAS_ATTEMPTS = 5;

export const paymentUri = (id: string) => `/session/v1/payments/${id}`;

export type PaymentRow = PaymentsTable;

/** Why a payment was not moved. */
export class PaymentRefused extends Error {}

/** Payments and their change history: only this repository reads or writes their tables. */
export function paymentRepository(db: Executor) {
  const find = (id: string) => db.selectFrom("payments").selectAll().where("id", "=", id).executeTakeFirst();

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

    async open(row: PaymentRow, actor: string): Promise<void> {
      await db.insertInto("payments").values(row).execute();
      await addChange(row.id, null, row.status, actor, row.created_at);
    },

    /**
     * Moves a payment to `to` when the payment machine allows it, with a compare-and-set on its status.
     * Throws PaymentRefused when it does not, or when the payment's provider takes no marks from `actor`.
     */
    async move(id: string, to: PaymentStatus, actor: string, now: Date): Promise<{ from: PaymentStatus }> {
      for (let attempt = 0; attempt < MAX_CAS_ATTEMPTS; attempt++) {
        const current = await find(id);
        if (!current) throw new PaymentRefused(`payment ${id} not found`);
        if (actor === "operator" && !paymentProviderNamed(current.provider)?.operatorMarks)
          throw new PaymentRefused(`payment ${id} is handled by ${current.provider}, which takes no marks`);
        const move = movePayment(current.status, to);
        if (!move.ok) throw new PaymentRefused(move.message);
        const at = now.toISOString();
        const res = await db
          .updateTable("payments")
          .set({ status: move.status, updated_at: at })
          .where("id", "=", id)
          .where("status", "=", current.status)
          .executeTakeFirst();
        if (res.numUpdatedRows === 0n) continue;
        await addChange(id, current.status, move.status, actor, at);
        return { from: current.status };
      }
      throw new Error(`payment ${id}: too much contention`);
    },
  };
}
