import { createHmac, createSecretKey, type KeyObject } from "node:crypto";
import { createSigner } from "fast-jwt";
import { decodeJwt, errors, type JWTPayload, jwtVerify } from "jose";
import { PERMISSIONS, type Permission } from "../../shared/api/permissions.ts";
import type { Clock } from "../../shared/time/clock.ts";
import { LruMap } from "./lru-map.ts";
import type { ClientPrincipal, TokenPrincipal, UserPrincipal } from "./principal.ts";

export const ACCESS_TOKEN_TTL_S = 3600;
/** Tokens whose signature and claims were checked, kept until they expire: pollers repeat theirs. */
const VERIFIED_TOKENS = 10_000;

export type TokenVerdict = { ok: true; principal: TokenPrincipal } | { ok: false; reason: string };

type Kind = TokenPrincipal["kind"];

/**
 * Signed bearer tokens (HS256 with a server secret). The algorithm is pinned on verification, so
 * `alg: none` and tokens signed any other way are refused (S10); `now` comes from the injected clock.
 *
 * Two kinds: an API client's (S2S) and an external user's (a rider). Each kind is signed with its own key
 * (the user key is derived from the secret), so a token of one kind never verifies as the other, whatever
 * its claims say; the `kind` claim picks the key and is checked again after verification.
 */
export function createTokenIssuer(deps: { secret: Uint8Array; issuer: string; clock: Clock }) {
  const { issuer, clock } = deps;
  // Key objects made once: jose imports a raw key again on every call.
  const keys: Record<Kind, KeyObject> = {
    client: createSecretKey(deps.secret),
    user: createSecretKey(createHmac("sha256", deps.secret).update("external-user access token").digest()),
  };
  /** A token verified before is the same token: only its expiry can change the verdict (no nbf issued). */
  const verified = new LruMap<string, { principal: TokenPrincipal; expMs: number }>(VERIFIED_TOKENS);

  // Signers made once per key. fast-jwt signs with node:crypto's HMAC at once, where jose's SignJWT goes
  // through WebCrypto (an asynchronous job and a key import per token), the largest CPU cost of a sign-in
  // (docs/decisions/authentication.md). iat and exp are the payload's, from the injected clock.
  const signers: Record<Kind, (payload: Record<string, unknown>) => string> = {
    client: createSigner({ key: keys.client.export(), algorithm: "HS256" }),
    user: createSigner({ key: keys.user.export(), algorithm: "HS256" }),
  };

  function sign(kind: Kind, subject: string, claims: Record<string, unknown>): Promise<string> {
    const now = Math.floor(clock.now().getTime() / 1000);
    const payload = { ...claims, kind, iss: issuer, sub: subject, iat: now, exp: now + ACCESS_TOKEN_TTL_S };
    return Promise.resolve(signers[kind](payload));
  }

  function clientFrom(payload: JWTPayload): ClientPrincipal | null {
    const perms = Array.isArray(payload.perms) ? payload.perms : [];
    if (typeof payload.sub !== "string" || typeof payload.op !== "string") return null;
    return {
      kind: "client",
      id: payload.sub,
      operatorId: payload.op,
      permissions: new Set(
        perms.filter((p): p is Permission => (PERMISSIONS as readonly unknown[]).includes(p)),
      ),
    };
  }

  function userFrom(payload: JWTPayload): UserPrincipal | null {
    if (typeof payload.sub !== "string" || typeof payload.op !== "string" || "perms" in payload) return null;
    // No `gen`: issued before generations existed, so of the first one.
    const gen = payload.gen ?? 0;
    if (typeof gen !== "number" || !Number.isInteger(gen) || gen < 0) return null;
    return {
      kind: "user",
      id: payload.sub,
      operatorId: payload.op,
      permissions: new Set(),
      tokenGeneration: gen,
    };
  }

  return {
    issue(client: { id: string; operatorId: string; permissions: readonly Permission[] }): Promise<string> {
      return sign("client", client.id, { op: client.operatorId, perms: client.permissions });
    },

    /**
     * An external user's access token (1 hour): the rider's service_user_id and operator, no permissions,
     * and the rider's token generation (a revocation moves it on, refusing the tokens of earlier ones).
     */
    issueUser(user: { id: string; operatorId: string; generation?: number }): Promise<string> {
      return sign("user", user.id, { op: user.operatorId, gen: user.generation ?? 0 });
    },

    async verify(token: string): Promise<TokenVerdict> {
      const known = verified.get(token);
      if (known) {
        if (clock.now().getTime() < known.expMs) return { ok: true, principal: known.principal };
        verified.delete(token);
        return { ok: false, reason: "token expired" };
      }
      let kind: unknown;
      try {
        kind = decodeJwt(token).kind;
      } catch {
        return { ok: false, reason: "token invalid" };
      }
      if (kind !== "client" && kind !== "user") return { ok: false, reason: "malformed claims" };
      try {
        const { payload } = await jwtVerify(token, keys[kind], {
          algorithms: ["HS256"],
          issuer,
          currentDate: clock.now(),
          requiredClaims: ["sub", "exp", "iat"],
        });
        const principal =
          payload.kind !== kind ? null : kind === "client" ? clientFrom(payload) : userFrom(payload);
        if (!principal) return { ok: false, reason: "malformed claims" };
        verified.set(token, { principal, expMs: (payload.exp as number) * 1000 });
        return { ok: true, principal };
      } catch (err) {
        if (err instanceof errors.JWTExpired) return { ok: false, reason: "token expired" };
        return { ok: false, reason: "token invalid" };
      }
    },
  };
}

export type TokenIssuer = ReturnType<typeof createTokenIssuer>;
