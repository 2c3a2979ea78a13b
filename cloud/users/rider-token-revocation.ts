import { type AuditOrigin, recordAudit } from "../audit/audit-log.ts";
import type { UserPrincipal } from "../auth/principal.ts";
import type { Db, Executor } from "../store/db.ts";
import { revokeRefreshTokens } from "./refresh-tokens.ts";
import { type ExternalUser, userRepository } from "./user-repository.ts";

/**
 * Revoking a rider's tokens (docs/decisions/external-users.md): every refresh token is marked revoked, and
 * the rider's token generation moves on, so the access tokens already issued (which carry the generation
 * they were issued under) are refused by the public API at once, on every replica, instead of running out
 * within the hour. One query by primary key per rider request is the price.
 */

export type RiderRef = { operatorId: string } & ({ userId: string } | { serviceUserId: string });

/** The rider's current token generation; 0 for a rider the store does not hold. */
export async function riderTokenGeneration(db: Executor, serviceUserId: string): Promise<number> {
  const row = await generationQuery(db, { id: serviceUserId }).executeTakeFirst();
  return row?.token_generation ?? 0;
}

/** The query of `riderTokenGeneration` (refresh-token-intake.ts runs it shaped). */
export const generationQuery = (db: Executor, v: { id: string }) =>
  db.selectFrom("external_users").select("token_generation").where("id", "=", v.id);

/**
 * Whether a rider's access token was issued before its rider's last revocation. A rider the store does
 * not hold has no revocation to answer to.
 */
export async function riderTokenRevoked(db: Executor, principal: UserPrincipal): Promise<boolean> {
  const row = await db
    .selectFrom("external_users")
    .select("token_generation")
    .where("id", "=", principal.id)
    .where("operator_id", "=", principal.operatorId)
    .executeTakeFirst();
  return row !== undefined && (principal.tokenGeneration ?? 0) < row.token_generation;
}

/**
 * Revokes every token of one rider, named by the integrator's user_id or by service_user_id: refresh
 * tokens can no longer be redeemed and access tokens are refused; the rider's apps must sign in again.
 * Recorded in the audit log when `audit` names who did it. Null when the operator has no such rider.
 */
export async function revokeRiderTokens(
  db: Db,
  rider: RiderRef,
  now: Date,
  audit?: { origin: AuditOrigin; reason: string | null },
): Promise<{ rider: ExternalUser; revoked: number } | null> {
  return await db.transaction().execute(async (trx) => {
    const users = userRepository(trx);
    const found =
      "userId" in rider
        ? await users.findByUserId(rider.operatorId, rider.userId)
        : await users.find(rider.operatorId, rider.serviceUserId);
    if (!found) return null;
    await trx
      .updateTable("external_users")
      .set((eb) => ({ token_generation: eb("token_generation", "+", 1) }))
      .where("id", "=", found.id)
      .where("operator_id", "=", found.operatorId)
      .execute();
    const revoked = await revokeRefreshTokens(
      trx,
      { operatorId: found.operatorId, serviceUserId: found.id },
      now,
    );
    if (audit)
      await recordAudit(
        trx,
        audit.origin,
        {
          operatorId: found.operatorId,
          action: "rider.revoke_tokens",
          subject: { type: "rider", id: found.id },
          reason: audit.reason,
          changes: { refresh_tokens_revoked: { from: null, to: revoked } },
        },
        now,
      );
    return { rider: found, revoked };
  });
}
