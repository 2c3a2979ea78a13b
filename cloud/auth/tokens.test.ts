import { createHmac } from "node:crypto";
import { decodeProtectedHeader, jwtVerify, SignJWT } from "jose";
import { describe, expect, it } from "vitest";
import { FakeClock } from "../../test/support/fake-clock.ts";
import { ACCESS_TOKEN_TTL_S, createTokenIssuer } from "./tokens.ts";

const secret = new TextEncoder().encode("a-token-secret-of-at-least-32-bytes!");
const issuer = "http://cloud.test";
const userKey = createHmac("sha256", secret).update("external-user access token").digest();

describe("access tokens", () => {
  it("are the compact JWS jose's SignJWT makes of the same claims, byte for byte", async () => {
    const clock = new FakeClock();
    const tokens = createTokenIssuer({ secret, issuer, clock });
    const now = Math.floor(clock.now().getTime() / 1000);
    const ours = await tokens.issueUser({ id: "rider-1", operatorId: "op-1", generation: 3 });
    const jose = await new SignJWT({ op: "op-1", gen: 3, kind: "user" })
      .setProtectedHeader({ alg: "HS256", typ: "JWT" })
      .setIssuer(issuer)
      .setSubject("rider-1")
      .setIssuedAt(now)
      .setExpirationTime(now + ACCESS_TOKEN_TTL_S)
      .sign(userKey);
    expect(ours).toBe(jose);
    expect(decodeProtectedHeader(ours)).toEqual({ alg: "HS256", typ: "JWT" });
    const { payload } = await jwtVerify(ours, userKey, {
      algorithms: ["HS256"],
      issuer,
      currentDate: clock.now(),
    });
    expect(payload).toMatchObject({ sub: "rider-1", op: "op-1", gen: 3, kind: "user", iat: now });
  });

  it("verify as what they were issued for, each kind only under its own key", async () => {
    const clock = new FakeClock();
    const tokens = createTokenIssuer({ secret, issuer, clock });
    const client = await tokens.issue({ id: "client-1", operatorId: "op-1", permissions: [] });
    const user = await tokens.issueUser({ id: "rider-1", operatorId: "op-1" });
    expect(await tokens.verify(client)).toMatchObject({
      ok: true,
      principal: { kind: "client", id: "client-1" },
    });
    expect(await tokens.verify(user)).toMatchObject({
      ok: true,
      principal: { kind: "user", id: "rider-1", tokenGeneration: 0 },
    });
    const [header, payload, signature] = user.split(".");
    const asClient = Buffer.from(payload as string, "base64url")
      .toString()
      .replace('"user"', '"client"');
    const forged = `${header}.${Buffer.from(asClient).toString("base64url")}.${signature}`;
    expect(await tokens.verify(forged)).toEqual({ ok: false, reason: "token invalid" });
    clock.advance(ACCESS_TOKEN_TTL_S * 1000);
    expect(await tokens.verify(user)).toEqual({ ok: false, reason: "token expired" });
    expect(await createTokenIssuer({ secret, issuer, clock }).verify(user)).toEqual({
      ok: false,
      reason: "token expired",
    });
  });
});
