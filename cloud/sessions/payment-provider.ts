import type { PaymentStatus } from "../../shared/domain/payment-machine.ts";
import type { Fee } from "./billing.ts";

/** A calculated fee handed to a payment provider when a chargeable session ends. */
export type Charge = {
  paymentId: string;
  sessionId: string;
  operatorId: string;
  /** service_user_id of the rider */
  userId: string;
  fee: Fee;
};

/**
 * Where the money of a session is collected. The session's end writes the payment in the status the
 * provider opens it in, in the same transaction as the end event, so `open` does no I/O; a provider that
 * talks to a payment service reports later moves through the same payment machine (`markPayment`).
 */
export interface PaymentProvider {
  readonly name: string;
  /** The status a chargeable session's payment starts in (the fee is calculated, nothing is authorized). */
  open(charge: Charge): PaymentStatus;
  /** Whether the operator moves this provider's payments by hand (`npm run operator -- mark-payment`). */
  readonly operatorMarks: boolean;
}

/**
 * The built-in provider: collects nothing itself. A payment stays PENDING until the operator marks it
 * (paid at the counter, waived, refunded...), each mark checked by the payment machine.
 */
export const builtinPaymentProvider: PaymentProvider = {
  name: "builtin",
  open: () => "PENDING",
  operatorMarks: true,
};

const PROVIDERS = new Map<string, PaymentProvider>([[builtinPaymentProvider.name, builtinPaymentProvider]]);

/** The provider of an operator's sessions: the built-in one until operators can choose another. */
export function paymentProviderFor(_operatorId: string): PaymentProvider {
  return builtinPaymentProvider;
}

/** The provider that handles a stored payment, by the name recorded on it. */
export function paymentProviderNamed(name: string): PaymentProvider | undefined {
  return PROVIDERS.get(name);
}
