import { sql } from "kysely";
import type { Db, Executor } from "../store/db.ts";

/** The store or a transaction of it, with deletes: dead and surplus tokens go. */
type Store = Executor & Pick<Db, "deleteFrom">;

/** A stored refresh token: only its hash, bound to the rider and the rider's operator. */
export type RefreshTokenRecord = {
  id: string;
  operatorId: string;
  /** service_user_id of the rider */
  userId: string;
  tokenHash: string;
  createdAt: string;
  expiresAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
};

/** The INSERT of one refresh token (refreshTokenRepository's `insert`; refresh-token-intake.ts runs it shaped). */
export function insertTokenQuery(db: Store, t: RefreshTokenRecord) {
  return db.insertInto("external_user_refresh_tokens").values({
    id: t.id,
    operator_id: t.operatorId,
    user_id: t.userId,
    token_hash: t.tokenHash,
    created_at: t.createdAt,
    expires_at: t.expiresAt,
    last_used_at: t.lastUsedAt,
    revoked_at: t.revokedAt,
  });
}

/**
 * The DELETE of `dropDeadAndSurplusOf` below: the rider's dead tokens at `now` (an ISO time) and the live
 * ones after the newest `skip` + 1 (a value only, never computed on: refresh-token-intake.ts shapes it).
 */
export function trimTokensQuery(db: Store, v: { userId: string; now: string; skip: number }) {
  const bound = db
    .selectFrom("external_user_refresh_tokens")
    .select(["created_at", "id"])
    .where("user_id", "=", v.userId)
    .where("revoked_at", "is", null)
    .where("expires_at", ">", v.now)
    .orderBy("created_at", "desc")
    .orderBy("id", "desc")
    .limit(1)
    .offset(v.skip);
  return db
    .deleteFrom("external_user_refresh_tokens")
    .where("user_id", "=", v.userId)
    .where((eb) =>
      eb.or([
        eb("revoked_at", "is not", null),
        eb("expires_at", "<=", v.now),
        sql<boolean>`(created_at, id) < (${bound})`,
      ]),
    );
}

/** Riders' refresh tokens, looked up by hash. */
export function refreshTokenRepository(db: Store) {
  return {
    async insert(t: RefreshTokenRecord): Promise<void> {
      await insertTokenQuery(db, t).execute();
    },

    /** The rider's tokens, newest first (ties by id, descending), as records. */
    async ofRider(serviceUserId: string): Promise<RefreshTokenRecord[]> {
      const rows = await db
        .selectFrom("external_user_refresh_tokens")
        .selectAll()
        .where("user_id", "=", serviceUserId)
        .orderBy("created_at", "desc")
        .orderBy("id", "desc")
        .execute();
      return rows.map((r) => ({
        id: r.id,
        operatorId: r.operator_id,
        userId: r.user_id,
        tokenHash: r.token_hash,
        createdAt: r.created_at,
        expiresAt: r.expires_at,
        lastUsedAt: r.last_used_at,
        revokedAt: r.revoked_at,
      }));
    },

    /**
     * Removes the rider's dead tokens (revoked, or expired at `now`) and the live ones beyond the newest
     * `keep` (newest by creation, ties by id, as `ofRider` orders them), in one statement: the live token
     * `keep`-th from the newest is the bound, and every live token ordered after it goes. Nothing beyond
     * the dead goes while the rider holds `keep` live tokens or fewer (the bound is then NULL).
     */
    async dropDeadAndSurplusOf(serviceUserId: string, now: Date, keep: number): Promise<void> {
      await trimTokensQuery(db, { userId: serviceUserId, now: now.toISOString(), skip: keep - 1 }).execute();
    },

    /**
     * The live (not revoked, not expired at `now`) token with this hash issued to this rider, and (when
     * given) this operator, with the rider it stands for; undefined otherwise.
     */
    async findLive(
      q: { tokenHash: string; serviceUserId: string; operatorId?: string },
      now: Date,
    ): Promise<{ id: string; userId: string; operatorId: string } | undefined> {
      let query = db
        .selectFrom("external_user_refresh_tokens")
        .innerJoin("external_users", "external_users.id", "external_user_refresh_tokens.user_id")
        .select([
          "external_user_refresh_tokens.id",
          "external_users.id as user_id",
          "external_users.operator_id",
        ])
        .where("external_user_refresh_tokens.token_hash", "=", q.tokenHash)
        .where("external_user_refresh_tokens.user_id", "=", q.serviceUserId)
        // The token's operator and the rider's must agree (they always do unless the store was edited).
        .whereRef("external_user_refresh_tokens.operator_id", "=", "external_users.operator_id")
        .where("external_user_refresh_tokens.revoked_at", "is", null)
        .where("external_user_refresh_tokens.expires_at", ">", now.toISOString());
      if (q.operatorId !== undefined) query = query.where("external_users.operator_id", "=", q.operatorId);
      const row = await query.executeTakeFirst();
      return row && { id: row.id, userId: row.user_id, operatorId: row.operator_id };
    },

    async markUsed(id: string, at: Date): Promise<void> {
      await db
        .updateTable("external_user_refresh_tokens")
        .set({ last_used_at: at.toISOString() })
        .where("id", "=", id)
        .execute();
    },

    /** Revokes the rider's tokens not revoked yet; returns how many. */
    async revokeAllOf(rider: { operatorId: string; serviceUserId: string }, at: Date): Promise<number> {
      const result = await db
        .updateTable("external_user_refresh_tokens")
        .set({ revoked_at: at.toISOString() })
        .where("operator_id", "=", rider.operatorId)
        .where("user_id", "=", rider.serviceUserId)
        .where("revoked_at", "is", null)
        .executeTakeFirst();
      return Number(result.numUpdatedRows);
    },
  };
}

export type RefreshTokenRepository = ReturnType<typeof refreshTokenRepository>;
