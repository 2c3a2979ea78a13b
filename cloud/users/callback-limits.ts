import { AppError } from "../../shared/api/errors.ts";
import type { Clock } from "../../shared/time/clock.ts";
import { createRequestLimiter, type RatePolicy } from "../auth/request-limiter.ts";

/** One flow's allowance: per operator, and per client address. */
export type Budget = { perOperator: RatePolicy; perAddress: RatePolicy };

export type RateLimitOptions = { signUp?: Partial<Budget>; signIn?: Partial<Budget> };

/**
 * Sign-up and sign-in each have budgets of their own, so a flood of one never starves the other (a burst
 * of invented sign-ups does not lock riders out of signing in). Per operator, so nobody can turn the
 * service against an operator's server; per client address, at half the operator's, so one address can
 * never use up an operator's budget on its own (docs/decisions/external-users.md). Sign-in has twice sign-up's: every
 * rider signs in again on each device and at least every 90 days, but signs up once.
 */
export const DEFAULT_RATE_LIMITS: { signUp: Budget; signIn: Budget } = {
  signUp: { perOperator: { burst: 60, perMinute: 60 }, perAddress: { burst: 30, perMinute: 30 } },
  signIn: { perOperator: { burst: 120, perMinute: 120 }, perAddress: { burst: 60, perMinute: 60 } },
};

function createBudget(clock: Clock, which: "sign-up" | "sign-in", budget: Budget) {
  const byOperator = createRequestLimiter({ clock, policy: budget.perOperator });
  const byAddress = createRequestLimiter({ clock, policy: budget.perAddress });
  return {
    /**
     * Counts one request of the address and, when the operator is known, of the operator; or answers 429
     * with Retry-After, counting nothing. An unknown operator counts for the address only, so made-up
     * operator ids cannot crowd the real ones out of the operators' buckets.
     */
    admit(operatorId: string | null, address: string): void {
      const wait = Math.max(operatorId === null ? 0 : byOperator.waitS(operatorId), byAddress.waitS(address));
      if (wait > 0)
        throw new AppError(
          "ERRORS.RATE_LIMITED",
          `Too many ${which} requests; try again later`,
          {},
          { "retry-after": String(wait) },
        );
      if (operatorId !== null) byOperator.take(operatorId);
      byAddress.take(address);
    },
  };
}

const budgetOf = (given: Partial<Budget> | undefined, defaults: Budget): Budget => ({
  perOperator: given?.perOperator ?? defaults.perOperator,
  perAddress: given?.perAddress ?? defaults.perAddress,
});

export function createCallbackLimits(clock: Clock, options: RateLimitOptions = {}) {
  return {
    signUp: createBudget(clock, "sign-up", budgetOf(options.signUp, DEFAULT_RATE_LIMITS.signUp)),
    signIn: createBudget(clock, "sign-in", budgetOf(options.signIn, DEFAULT_RATE_LIMITS.signIn)),
  };
}

export type CallbackLimits = ReturnType<typeof createCallbackLimits>;
