import { errors, jwtVerify, SignJWT } from "jose";
import { PERMISSIONS, type Permission } from "../../shared/api/permissions.ts";
import type { Clock } from "../../shared/clock.ts";
import type { Principal } from "./principal.ts";

export const ACCESS_TOKEN_TTL_S = 3600;

export type TokenVerdict = { ok: true; principal: Principal } | { ok: false; reason: string };

/**
 * Signed bearer tokens (HS256 with a server secret). The algorithm is pinned on verification, so
 * `alg: none` and tokens signed any other way are refused (S10); `now` comes from the injected clock.
 */
export function createTokenIssuer(deps: { secret: Uint8Array; issuer: string; clock: Clock }) {
  const { secret, issuer, clock } = deps;
  return {
    issue(client: { id: string; operatorId: string; permissions: readonly Permission[] }): Promise<string> {
      const now = Math.floor(clock.now().getTime() / 1000);
      return new SignJWT({ op: client.operatorId, perms: client.permissions, kind: "client" })
        .setProtectedHeader({ alg: "HS256", typ: "JWT" })
        .setIssuer(issuer)
        .setSubject(client.id)
        .setIssuedAt(now)
        .setExpirationTime(now + ACCESS_TOKEN_TTL_S)
        .sign(secret);
    },

    async verify(token: string): Promise<TokenVerdict> {
      try {
        const { payload } = await jwtVerify(token, secret, {
          algorithms: ["HS256"],
          issuer,
          currentDate: clock.now(),
          requiredClaims: ["sub", "exp", "iat"],
        });
        const perms = Array.isArray(payload.perms) ? payload.perms : [];
        if (typeof payload.sub !== "string" || typeof payload.op !== "string" || payload.kind !== "client") {
          return { ok: false, reason: "malformed claims" };
        }
        return {
          ok: true,
          principal: {
            kind: "client",
            id: payload.sub,
            operatorId: payload.op,
            permissions: new Set(
              perms.filter((p): p is Permission => (PERMISSIONS as readonly unknown[]).includes(p)),
            ),
          },
        };
      } catch (err) {
        if (err instanceof errors.JWTExpired) return { ok: false, reason: "token expired" };
        return { ok: false, reason: "token invalid" };
      }
    },
  };
}

export type TokenIssuer = ReturnType<typeof createTokenIssuer>;
