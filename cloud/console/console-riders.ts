import type { ConsoleRider, RevokedRiderTokens } from "../../shared/api/console-riders.ts";
import { AppError } from "../../shared/api/errors.ts";
import type { Clock } from "../../shared/time/clock.ts";
import type { SessionService } from "../sessions/session-service.ts";
import type { SignedIn } from "../staff/console-sessions.ts";
import { staffOrigin, staffPrincipal } from "../staff/staff-principal.ts";
import type { Db } from "../store/db.ts";
import { refreshTokenRepository } from "../users/refresh-token-repository.ts";
import { revokeRiderTokens } from "../users/rider-token-revocation.ts";

/** Sessions shown on a rider's page; the sessions view, filtered by the rider, lists the rest. */
const RIDER_SESSIONS = 20;

const noRider = (id: string) => new AppError("ERRORS.NOT_FOUND", `No rider with id ${id}`);

/**
 * The console's riders (docs/decisions/console.md): one rider by the service's id with their sessions and
 * live refresh tokens, and revoking their tokens through the same revocation the operator CLI uses. A
 * staff member sees its own operator's riders; a superadmin any operator's (ids are unique across them).
 */
export function createConsoleRiders(deps: { db: Db; clock: Clock; sessions: SessionService }) {
  const { db, clock } = deps;

  /** The rider's row, within the staff member's operator (or any, for a superadmin); 404 otherwise. */
  async function riderRow(signed: SignedIn, id: string) {
    let q = db.selectFrom("external_users").selectAll().where("id", "=", id);
    const own = signed.staff.operatorId;
    if (own !== null) q = q.where("operator_id", "=", own);
    const row = await q.executeTakeFirst();
    if (!row) throw noRider(id);
    return row;
  }

  return {
    async get(signed: SignedIn, id: string): Promise<ConsoleRider> {
      const row = await riderRow(signed, id);
      const principal = staffPrincipal(signed, row.operator_id, "read");
      const now = clock.now().toISOString();
      // At most a few rows a rider (sign-in keeps 10 live ones); the hashes stay here.
      const tokens = (await refreshTokenRepository(db).ofRider(row.id))
        .filter((t) => t.operatorId === row.operator_id && t.revokedAt === null && t.expiresAt > now)
        .map((t) => ({
          id: t.id,
          created_at: t.createdAt,
          expires_at: t.expiresAt,
          last_used_at: t.lastUsedAt,
        }));
      const sessions = await deps.sessions.listConsole(principal, {
        user_id: row.id,
        limit: RIDER_SESSIONS,
      });
      return {
        id: row.id,
        user_id: row.user_id,
        operator_id: row.operator_id,
        status: "verified",
        phone_number: row.phone_number,
        created_at: row.created_at,
        tokens,
        sessions: sessions.data,
        more_sessions: sessions.pagination_token !== null,
      };
    },

    /** Revokes the rider's refresh and access tokens, audited as the staff member's act with `reason`. */
    async revokeTokens(
      signed: SignedIn,
      id: string,
      reason: string,
      correlationId: string,
    ): Promise<RevokedRiderTokens> {
      const row = await riderRow(signed, id);
      // Refused (403) before anything changes when the role may not act.
      staffPrincipal(signed, row.operator_id, "act");
      const done = await revokeRiderTokens(
        db,
        { operatorId: row.operator_id, serviceUserId: row.id },
        clock.now(),
        { origin: staffOrigin(signed, correlationId), reason },
      );
      if (!done) throw noRider(id);
      return { rider_id: done.rider.id, refresh_tokens_revoked: done.revoked };
    },
  };
}

export type ConsoleRiders = ReturnType<typeof createConsoleRiders>;
