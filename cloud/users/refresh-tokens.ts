import { createHash, randomBytes, randomUUID } from "node:crypto";
import type { Db } from "../store/db.ts";
import { type RefreshTokenRecord, refreshTokenRepository } from "./refresh-token-repository.ts";

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

/** A new refresh token of the rider, and the record that keeps it (only its hash). */
export function newRefreshTokenRecord(
  user: { id: string; operatorId: string },
  now: Date,
): { token: string; record: RefreshTokenRecord } {
  const token = newRefreshToken();
  const record: RefreshTokenRecord = {
    id: randomUUID(),
    operatorId: user.operatorId,
    userId: user.id,
    tokenHash: hashRefreshToken(token),
    createdAt: now.toISOString(),
    expiresAt: new Date(now.getTime() + REFRESH_TOKEN_TTL_MS).toISOString(),
    lastUsedAt: null,
    revokedAt: null,
  };
  return { token, record };
}

/**
 * Stores a new refresh token of the rider (only its hash) and returns the token itself. Run it in a
 * transaction (the caller's): the token and the trim below are then one commit.
 */
export async function issueRefreshToken(
  db: Store,
  user: { id: string; operatorId: string },
  now: Date,
): Promise<string> {
  const { token, record } = newRefreshTokenRecord(user, now);
  const tokens = refreshTokenRepository(db);
  await tokens.insert(record);
  // Bounded storage: the rider's dead tokens (revoked, expired) go, and beyond the newest few live ones the
  // older ones go too, so a rider holds at most MAX_LIVE_REFRESH_TOKENS rows after each sign-in.
  await tokens.dropDeadAndSurplusOf(user.id, now, MAX_LIVE_REFRESH_TOKENS);
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
  const tokens = refreshTokenRepository(db);
  const found = await tokens.findLive(
    { tokenHash: hashRefreshToken(q.token), serviceUserId: q.serviceUserId, operatorId: q.operatorId },
    now,
  );
  if (!found) return undefined;
  await tokens.markUsed(found.id, now);
  return { userId: found.userId, operatorId: found.operatorId };
}

/** Revokes every live refresh token of one rider; returns how many (access tokens: rider-token-revocation.ts). */
export function revokeRefreshTokens(
  db: Store,
  rider: { operatorId: string; serviceUserId: string },
  now: Date,
): Promise<number> {
  return refreshTokenRepository(db).revokeAllOf(rider, now);
}
