import { z } from "zod";
import { ConsoleSession } from "./console-sessions.ts";

/** A live refresh token of a rider as the console lists it: when it was issued and used, never the token. */
export const ConsoleRiderToken = z.object({
  id: z.string(),
  created_at: z.string(),
  expires_at: z.string(),
  last_used_at: z.string().nullable(),
});
export type ConsoleRiderToken = z.infer<typeof ConsoleRiderToken>;

/**
 * A rider (an external user) as the console shows it: the service's id (the spec's service_user_id), the
 * integrator's user_id, what the store holds of its verification, its newest sessions and live tokens.
 */
export const ConsoleRider = z.object({
  id: z.string(),
  user_id: z.string(),
  operator_id: z.string(),
  /** A rider row exists only once the operator's server accepted the sign-up. */
  status: z.literal("verified"),
  /** E.164, as the operator's sign-in answer last gave it; null when it never did. */
  phone_number: z.string().nullable(),
  created_at: z.string(),
  /** Live refresh tokens (not revoked, not expired), newest first. */
  tokens: z.array(ConsoleRiderToken),
  /** The rider's newest sessions, newest first. */
  sessions: z.array(ConsoleSession),
  /** Whether the rider has older sessions than those listed (the sessions view lists them all). */
  more_sessions: z.boolean(),
});
export type ConsoleRider = z.infer<typeof ConsoleRider>;

/** Revoking a rider's tokens: why, for the audit log. */
export const RevokeRiderTokensBody = z.strictObject({ reason: z.string().trim().min(1).max(2_000) });
export type RevokeRiderTokensBody = z.infer<typeof RevokeRiderTokensBody>;

export const RevokedRiderTokens = z.object({ rider_id: z.string(), refresh_tokens_revoked: z.number() });
export type RevokedRiderTokens = z.infer<typeof RevokedRiderTokens>;
