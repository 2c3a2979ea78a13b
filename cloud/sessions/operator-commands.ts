import { Argument, type Command } from "commander";
import { Uuid } from "../../shared/api/uuid.ts";
import { CliExit, EXIT } from "../../shared/cli/exit-codes.ts";
import { PAYMENT_STATUSES, type PaymentStatus } from "../../shared/domain/payment-machine.ts";
import { systemClock } from "../../shared/node/system-clock.ts";
import type { Clock } from "../../shared/time/clock.ts";
import type { Db } from "../store/db.ts";
import {
  endSessionForced,
  markPaymentForced,
  type OperatorAct,
  type SessionEnded,
} from "./operator-actions.ts";
import { PaymentRefused } from "./payments.ts";

type Deps = { db: Db; clock: Clock };

function idOf(what: string, value: string): string {
  const parsed = Uuid.safeParse(value);
  if (!parsed.success) throw new CliExit(EXIT.usage, `${what} must be a UUID, got ${JSON.stringify(value)}`);
  return parsed.data;
}

/** The site's own CLI acts for every operator; the audit log names it as the system's. */
const CLI_ACTOR = { kind: "system", id: "operator-cli" };

const act = (deps: Deps): OperatorAct => ({
  operatorId: null,
  origin: { actor: CLI_ACTOR },
  now: deps.clock.now(),
});

/**
 * The operator's forced end of a session (spec: Session status): booked or active → ended, fee and
 * payment as at any end; `withoutFee` makes the payment NOT_CHARGED. The device is left as it is.
 */
export async function endSessionByOperator(
  deps: Deps,
  sessionId: string,
  opts: { withoutFee: boolean },
): Promise<SessionEnded> {
  const id = idOf("session_id", sessionId);
  const r = await endSessionForced(deps.db, act(deps), id, opts);
  if (!("refused" in r)) return r;
  switch (r.refused) {
    case "not-found":
      throw new CliExit(EXIT.notFound, `session ${id} not found`);
    case "ended":
      throw new CliExit(EXIT.checkFailed, `session ${id} has already ended`);
    case "pending":
      throw new CliExit(
        EXIT.checkFailed,
        `session ${id} is pending (its lock or book never succeeded): there is nothing to end; it expires after 30 days`,
      );
    case "changed":
      throw new CliExit(EXIT.checkFailed, `session ${id} changed meanwhile; look again`);
  }
}

/** Moves a payment of the built-in provider to `status`, when the payment machine allows it. */
export async function markPaymentByOperator(
  deps: Deps,
  paymentId: string,
  status: string,
): Promise<{ paymentId: string; from: PaymentStatus; to: PaymentStatus }> {
  const id = idOf("payment_id", paymentId);
  const to = status.toUpperCase() as PaymentStatus;
  if (!PAYMENT_STATUSES.includes(to))
    throw new CliExit(EXIT.usage, `status must be one of ${PAYMENT_STATUSES.join(", ")}; got ${status}`);
  try {
    const moved = await markPaymentForced(deps.db, act(deps), id, to);
    if (!moved) throw new CliExit(EXIT.notFound, `payment ${id} not found`);
    return { paymentId: id, from: moved.from, to };
  } catch (err) {
    if (err instanceof PaymentRefused) throw new CliExit(EXIT.checkFailed, `payment ${id}: ${err.message}`);
    throw err;
  }
}

/** `end-session` and `mark-payment` of `npm run operator`. */
export function registerSessionCommands(
  program: Command,
  withStore: <T>(fn: (db: Db) => Promise<T>) => Promise<T>,
): void {
  program
    .command("end-session")
    .description(
      "End a booked or active session now (forced end); its fee and payment are settled as at any end",
    )
    .argument("<session_id>", "the session's id")
    .option("--without-fee", "make its payment NOT_CHARGED whatever it would cost", false)
    .action(async (sessionId: string, opts: { withoutFee: boolean }) => {
      const r = await withStore((db) => endSessionByOperator({ db, clock: systemClock }, sessionId, opts));
      console.log(
        `session ${r.sessionId} ended; fee ${r.fee ?? "none"}; payment ${r.paymentId} ${r.payment}`,
      );
    });
  program
    .command("mark-payment")
    .description("Mark a payment of the built-in provider (paid at the counter, waived, refunded...)")
    .argument("<payment_id>", "the payment's id (a session's payment.id)")
    .addArgument(new Argument("<status>", "the status it moves to").choices(PAYMENT_STATUSES))
    .action(async (paymentId: string, status: string) => {
      const r = await withStore((db) => markPaymentByOperator({ db, clock: systemClock }, paymentId, status));
      console.log(`payment ${r.paymentId}: ${r.from} → ${r.to}`);
    });
}
