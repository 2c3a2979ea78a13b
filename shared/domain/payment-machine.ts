/**
 * Payment status of a session (spec: States and transitions → Payment status), as a pure function.
 * The spec lists the statuses and leaves the transitions "not shown"; these are ours
 * (docs/decisions/sessions-and-billing.md):
 *
 *   (session ended, chargeable)      → PENDING          fee calculated, not yet authorized
 *   (session ended, not chargeable)  → NOT_CHARGED
 *   PENDING        → PAID | NEEDS_APPROVAL | PAYMENT_FAILED | CANCELED | NOT_CHARGED
 *   NEEDS_APPROVAL → APPROVED | CANCELED
 *   APPROVED       → PAID | PAYMENT_FAILED | CANCELED
 *   PAYMENT_FAILED → PENDING (retry) | PAID | CANCELED | NOT_CHARGED (waived)
 *   PAID           → REFUNDED | REFUND_FAILED
 *   REFUND_FAILED  → REFUNDED | PAID (refund abandoned: the money stays paid)
 *   REFUNDED, CANCELED, NOT_CHARGED are final.
 *
 * Money is refunded only once it was paid, and a waived payment (NOT_CHARGED) never collects.
 */
export const PAYMENT_STATUSES = [
  "PENDING",
  "PAID",
  "NEEDS_APPROVAL",
  "APPROVED",
  "CANCELED",
  "PAYMENT_FAILED",
  "REFUNDED",
  "REFUND_FAILED",
  "NOT_CHARGED",
] as const;
export type PaymentStatus = (typeof PAYMENT_STATUSES)[number];

export const PAYMENT_TRANSITIONS: Readonly<Record<PaymentStatus, readonly PaymentStatus[]>> = {
  PENDING: ["PAID", "NEEDS_APPROVAL", "PAYMENT_FAILED", "CANCELED", "NOT_CHARGED"],
  NEEDS_APPROVAL: ["APPROVED", "CANCELED"],
  APPROVED: ["PAID", "PAYMENT_FAILED", "CANCELED"],
  PAYMENT_FAILED: ["PENDING", "PAID", "CANCELED", "NOT_CHARGED"],
  PAID: ["REFUNDED", "REFUND_FAILED"],
  REFUND_FAILED: ["REFUNDED", "PAID"],
  REFUNDED: [],
  CANCELED: [],
  NOT_CHARGED: [],
};

export function isFinalPayment(status: PaymentStatus): boolean {
  return PAYMENT_TRANSITIONS[status].length === 0;
}

/** The status a session's payment starts in when the session ends. */
export function initialPaymentStatus(chargeable: boolean): PaymentStatus {
  return chargeable ? "PENDING" : "NOT_CHARGED";
}

export type PaymentMove = { ok: true; status: PaymentStatus } | { ok: false; message: string };

/** Moves a payment to `to` when the machine allows it from `from`. */
export function movePayment(from: PaymentStatus, to: PaymentStatus): PaymentMove {
  if (PAYMENT_TRANSITIONS[from].includes(to)) return { ok: true, status: to };
  const allowed = PAYMENT_TRANSITIONS[from];
  return {
    ok: false,
    message: allowed.length
      ? `A ${from} payment can become ${allowed.join(", ")}, not ${to}`
      : `A ${from} payment is final`,
  };
}
