import { createHash, randomBytes, randomUUID } from "node:crypto";
import type { Db } from "../store/db.ts";

/** The store or a transaction of it. */
type Store = Pick<Db, "selectFrom" | "updateTable" | "insertInto" | "deleteFrom">;

/** A refresh token lives 90 days from its sign-in; refreshing does not extend it (docs/decisions/external-users.md). */
export const REFRESH_TOKEN_TTL_MS = 90 * 24 * 3600_000;
/** Live refresh tokens kept per rider (one per device signed in); a newer sign-in ends the oldest. */
export const MAX_LIVE_REFRESH_TOKENS = 10;
/** Spec: a refresh token "must not be too short". Ours are 43 characters (32 random bytes, base64url). */
export const REFRESH_TOKEN_MIN_LENGTH = 32;
export const REFRESH_TOKEN_MAX_LENGTH = 512;

/** 256 random bits: guessing one is hopeless, so an unsalted SHA-256 is a sound way to keep it. */
export function newRefreshToken(): string {
  return randomBytes(32).toString("base64url");
}

export function hashRefreshToken(token: string): string {
  return createHash("sha256").update(token, "utf8").digest("hex");
}

/** Stores a new refresh token of the rider (only its hash) and returns the token itself. */
export async function issueRefreshToken(
  db: Store,
  user: { id: string; operatorId: string },
  now: Date,
): Promise<string> {
  const token = newRefreshToken();
  await db
    .insertInto("external_user_refresh_tokens")
    .values({
      id: randomUUID(),
      operator_id: user.operatorId,
      user_id: user.id,
      token_hash: hashRefreshToken(token),
      created_at: now.toISOString(),
      expires_at: new Date(now.getTime() + REFRESH_TOKEN_TTL_MS).toISOString(),
      last_used_at: null,
      revoked_at: null,
    })
    .execute();
  // Bounded storage: the rider's dead tokens (revoked, expired) go, and beyond the newest few live ones the
  // older ones go too, so a rider holds at most MAX_LIVE_REFRESH_TOKENS rows after each sign-in.
  const ts = now.toISOString();
  await db
    .deleteFrom("external_user_refresh_tokens")
    .where("user_id", "=", user.id)
    .where((eb) => eb.or([eb("revoked_at", "is not", null), eb("expires_at", "<=", ts)]))
    .execute();
  const live = await db
    .selectFrom("external_user_refresh_tokens")
    .select("id")
    .where("user_id", "=", user.id)
    .orderBy("created_at", "desc")
    .orderBy("id", "desc")
    .execute();
  const surplus = live.slice(MAX_LIVE_REFRESH_TOKENS).map((r) => r.id);
  if (surplus.length > 0)
    await db.deleteFrom("external_user_refresh_tokens").where("id", "in", surplus).execute();
  return token;
}

/**
 * The rider a refresh token stands for, if the token is live (not revoked, not expired) and was issued to
 * this rider (and, when given, this operator); marks it used. Undefined otherwise.
 */
export async function redeemRefreshToken(
  db: Store,
  q: { token: string; serviceUserId: string; operatorId?: string },
  now: Date,
): Promise<{ userId: string; operatorId: string } | undefined> {
  let query = db
    .selectFrom("external_user_refresh_tokens")
    .innerJoin("external_users", "external_users.id", "external_user_refresh_tokens.user_id")
    .select(["external_user_refresh_tokens.id", "external_users.id as user_id", "external_users.operator_id"])
    .where("external_user_refresh_tokens.token_hash", "=", hashRefreshToken(q.token))
    .where("external_user_refresh_tokens.user_id", "=", q.serviceUserId)
    // The token's operator and the rider's must agree (they always do unless the store was edited).
    .whereRef("external_user_refresh_tokens.operator_id", "=", "external_users.operator_id")
    .where("external_user_refresh_tokens.revoked_at", "is", null)
    .where("external_user_refresh_tokens.expires_at", ">", now.toISOString());
  if (q.operatorId !== undefined) query = query.where("external_users.operator_id", "=", q.operatorId);
  const row = await query.executeTakeFirst();
  if (!row) return undefined;
  await db
    .updateTable("external_user_refresh_tokens")
    .set({ last_used_at: now.toISOString() })
    .where("id", "=", row.id)
    .execute();
  return { userId: row.user_id, operatorId: row.operator_id };
}

/** Revokes every live refresh token of one rider; returns how many. Access tokens run out within the hour. */
export async function revokeRefreshTokens(
  db: Store,
  rider: { operatorId: string; serviceUserId: string },
  now: Date,
): Promise<number> {
  const result = await db
    .updateTable("external_user_refresh_tokens")
    .set({ revoked_at: now.toISOString() })
    .where("operator_id", "=", rider.operatorId)
    .where("user_id", "=", rider.serviceUserId)
    .where("revoked_at", "is", null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}
