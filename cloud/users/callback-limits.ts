import type { Clock } from "../../shared/clock.ts";
import { AppError } from "../../shared/errors.ts";
import { createRequestLimiter, type RatePolicy } from "../auth/request-limiter.ts";

export type RateLimitOptions = { perOperator?: RatePolicy; perAddress?: RatePolicy };

/**
 * Sign-up and sign-in call the operator's server, so they are limited before each call: per operator,
 * so nobody can turn the service against an operator's server, and per client address, so one address
 * can neither spray many operators nor go unnoticed. An integrator's back end usually calls from one
 * address, so both allow the same rate (docs/decisions.md).
 */
export const DEFAULT_RATE_LIMITS: Required<RateLimitOptions> = {
  perOperator: { burst: 60, perMinute: 60 },
  perAddress: { burst: 60, perMinute: 60 },
};

export function createCallbackLimits(clock: Clock, options: RateLimitOptions = {}) {
  const byOperator = createRequestLimiter({
    clock,
    policy: options.perOperator ?? DEFAULT_RATE_LIMITS.perOperator,
  });
  const byAddress = createRequestLimiter({
    clock,
    policy: options.perAddress ?? DEFAULT_RATE_LIMITS.perAddress,
  });
  return {
    /** Counts one outbound call for the operator and the address, or answers 429 with Retry-After. */
    admit(operatorId: string, address: string): void {
      const wait = Math.max(byOperator.waitS(operatorId), byAddress.waitS(address));
      if (wait > 0)
        throw new AppError(
          "ERRORS.RATE_LIMITED",
          "Too many sign-up and sign-in requests; try again later",
          {},
          { "retry-after": String(wait) },
        );
      byOperator.take(operatorId);
      byAddress.take(address);
    },
  };
}

export type CallbackLimits = ReturnType<typeof createCallbackLimits>;
