import { movePayment, type PaymentStatus } from "../../shared/domain/payment-machine.ts";
import type { Executor } from "../store/db.ts";
import { paymentProviderNamed } from "./payment-provider.ts";
import { paymentRepository } from "./payment-repository.ts";

const MAX_CAS_ATTEMPTS = 5;

export const paymentUri = (id: string) => `/session/v1/payments/${id}`;

/** Why a payment was not moved. */
export class PaymentRefused extends Error {}

/**
 * Moves a payment to `to` when the payment machine allows it, with a compare-and-set on its status.
 * Throws PaymentRefused when it does not, or when the payment's provider takes no marks from `actor`.
 */
export async function movePaymentTo(
  db: Executor,
  id: string,
  to: PaymentStatus,
  actor: string,
  now: Date,
): Promise<{ from: PaymentStatus }> {
  const payments = paymentRepository(db);
  for (let attempt = 0; attempt < MAX_CAS_ATTEMPTS; attempt++) {
    const current = await payments.find(id);
    if (!current) throw new PaymentRefused(`payment ${id} not found`);
    if (actor === "operator" && !paymentProviderNamed(current.provider)?.operatorMarks)
      throw new PaymentRefused(`payment ${id} is handled by ${current.provider}, which takes no marks`);
    const move = movePayment(current.status, to);
    if (!move.ok) throw new PaymentRefused(move.message);
    if (await payments.compareAndSetStatus(id, current.status, move.status, actor, now))
      return { from: current.status };
  }
  throw new Error(`payment ${id}: too much contention`);
}
