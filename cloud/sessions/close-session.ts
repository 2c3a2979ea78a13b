import { randomUUID } from "node:crypto";
import { billedFrom } from "../../shared/domain/session-machine.ts";
import type { Executor } from "../store/db.ts";
import { billSession } from "./billing.ts";
import { paymentProviderFor } from "./payment-provider.ts";
import { paymentRepository } from "./payment-repository.ts";
import { priceListRepository } from "./price-list-repository.ts";
import { termsOf } from "./price-lists.ts";
import { type SessionRow, sessionRepository, viewOf } from "./session-repository.ts";

/**
 * Why a session ended: the rider's unlock, an operator's force-unlock or forced end, the hardware found
 * unlocked (sensors), or a booking cancelled or over before any lock.
 */
export type EndCause =
  | "unlock"
  | "force-unlock"
  | "hardware"
  | "operator"
  | "cancel-booking"
  | "booking-over";

/**
 * Ends a session (event end) and settles what it costs, in the caller's transaction: the fee from its
 * price list and the billing rules, and its payment, opened by the operator's payment provider
 * (NOT_CHARGED when the rules say so). The end is dated `opts.at` (when the hardware ended it), else now.
 * Returns the ended session, or null when it could not end (it was pending, or had already ended).
 */
export async function closeSession(
  tx: Executor,
  session: Pick<SessionRow, "id">,
  now: Date,
  cause: EndCause,
  opts: { withoutFee?: boolean; at?: string } = {},
): Promise<SessionRow | null> {
  const sessions = sessionRepository(tx);
  const at = opts.at ?? now.toISOString();
  const ended = await sessions.record(session.id, { name: "end", timestamp: at }, now, {
    ended_by: cause,
  });
  if (!ended) return null;
  const priceList = ended.price_list_id ? await priceListRepository(tx).find(ended.price_list_id) : undefined;
  const view = viewOf(ended);
  const bill = billSession({
    userId: ended.user_id === "" ? null : ended.user_id,
    identifiedBy: ended.access_key_id ? "rfid" : "user",
    priceList: priceList ? termsOf(priceList) : null,
    // An ended session always began: the machine ends only booked and active sessions.
    from: billedFrom(view) ?? (view.end_time as string),
    to: view.end_time as string,
    withoutFee: opts.withoutFee ?? false,
  });
  const fee = { fee_currency: bill.fee?.currency ?? null, fee_value: bill.fee?.value ?? null };
  await sessions.setFee(ended.id, fee);
  const provider = paymentProviderFor(ended.operator_id);
  const paymentId = randomUUID();
  const status =
    bill.chargeable && bill.fee
      ? provider.open({
          paymentId,
          sessionId: ended.id,
          operatorId: ended.operator_id,
          userId: ended.user_id,
          fee: bill.fee,
        })
      : "NOT_CHARGED";
  const ts = now.toISOString();
  await paymentRepository(tx).open(
    {
      id: paymentId,
      operator_id: ended.operator_id,
      session_id: ended.id,
      provider: provider.name,
      status,
      created_at: ts,
      updated_at: ts,
    },
    "session-end",
  );
  return { ...ended, ...fee };
}
