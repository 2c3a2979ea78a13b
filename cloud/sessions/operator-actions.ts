import type { PaymentStatus } from "../../shared/domain/payment-machine.ts";
import { type AuditOrigin, recordAudit } from "../audit/audit-log.ts";
import type { Db } from "../store/db.ts";
import { closeSession } from "./close-session.ts";
import { paymentRepository } from "./payment-repository.ts";
import { movePaymentTo } from "./payments.ts";
import { sessionRepository } from "./session-repository.ts";

/**
 * The operator's actions on sessions and payments, as the CLI and the services take them: each writes its
 * audit entry in its own transaction, and one refused writes nothing.
 */

/** Who acts, when, and within which operator (null: every operator, as the site's own CLI). */
export type OperatorAct = { operatorId: string | null; origin: AuditOrigin; now: Date };

export type SessionEnded = {
  sessionId: string;
  fee: string | null;
  paymentId: string;
  payment: PaymentStatus;
};

/** Why a forced end did not happen. */
export type EndRefusal = "not-found" | "ended" | "pending" | "changed";

/**
 * The operator's forced end of a session (spec: Session status): booked or active → ended, fee and
 * payment as at any end; `withoutFee` makes the payment NOT_CHARGED. The device is left as it is.
 */
export async function endSessionForced(
  db: Db,
  act: OperatorAct,
  sessionId: string,
  opts: { withoutFee: boolean; comment?: string },
): Promise<SessionEnded | { refused: EndRefusal }> {
  return await db.transaction().execute(async (trx) => {
    const session = await sessionRepository(trx).find(sessionId);
    if (!session || (act.operatorId !== null && session.operator_id !== act.operatorId))
      return { refused: "not-found" as const };
    if (session.status === "ended") return { refused: "ended" as const };
    if (session.status === "pending") return { refused: "pending" as const };
    const ended = await closeSession(trx, session, act.now, "operator", opts);
    if (!ended) return { refused: "changed" as const };
    const payment = (await paymentRepository(trx).ofSessions([sessionId])).get(sessionId);
    if (!payment) throw new Error(`session ${sessionId} ended without a payment`);
    const fee = ended.fee_currency && ended.fee_value ? `${ended.fee_currency} ${ended.fee_value}` : null;
    await recordAudit(
      trx,
      act.origin,
      {
        operatorId: session.operator_id,
        action: opts.withoutFee ? "session.end-without-fee" : "session.end",
        subject: { type: "session", id: sessionId },
        comment: opts.comment ?? null,
        changes: {
          status: { from: session.status, to: "ended" },
          fee: { from: null, to: fee },
          payment_status: { from: null, to: payment.status },
        },
      },
      act.now,
    );
    return { sessionId, fee, paymentId: payment.id, payment: payment.status };
  });
}

/**
 * Moves a payment of the built-in provider to `to`, when the payment machine allows it. Undefined when the
 * payment is not found (or another operator's); throws PaymentRefused when the move is not allowed.
 */
export async function markPaymentForced(
  db: Db,
  act: OperatorAct,
  paymentId: string,
  to: PaymentStatus,
): Promise<{ from: PaymentStatus } | undefined> {
  return await db.transaction().execute(async (trx) => {
    const payment = await paymentRepository(trx).find(paymentId);
    if (!payment || (act.operatorId !== null && payment.operator_id !== act.operatorId)) return undefined;
    const { from } = await movePaymentTo(trx, paymentId, to, "operator", act.now);
    const subject = { type: "payment", id: paymentId };
    const changes = { status: { from, to } };
    await recordAudit(
      trx,
      act.origin,
      { operatorId: payment.operator_id, action: "payment.mark", subject, changes },
      act.now,
    );
    return { from };
  });
}
