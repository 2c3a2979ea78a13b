import { createHash, randomBytes } from "node:crypto";
import { once } from "node:events";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import type { InjectOptions, LightMyRequestResponse } from "fastify";
import { decodeJwt, SignJWT } from "jose";
import { Webhook } from "standardwebhooks";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { applyManifest } from "../../cloud/manifest/apply-manifest.ts";
import { SiteManifest } from "../../cloud/manifest/manifest-schema.ts";
import { DEFAULT_RATE_LIMITS } from "../../cloud/users/callback-limits.ts";
import { PENDING_SIGN_UP_TTL_MS } from "../../cloud/users/pending-sign-ups.ts";
import { refreshTokenRepository } from "../../cloud/users/refresh-token-repository.ts";
import { REFRESH_TOKEN_TTL_MS } from "../../cloud/users/refresh-tokens.ts";
import { revokeRiderTokens } from "../../cloud/users/rider-token-revocation.ts";
import { signUpRepository } from "../../cloud/users/sign-up-repository.ts";
import { userRepository } from "../../cloud/users/user-repository.ts";
import { SIGN_IN_FAILED } from "../../cloud/users/user-service.ts";
import { type CloudHarness, ISSUER, startCloudHarness, TOKEN_SECRET } from "../support/cloud-harness.ts";
import { eventually } from "../support/eventually.ts";
import { CLIENTS, fx, OP_A, OP_B } from "../support/fixture-site.ts";
import { CALLBACK_SECRET, declareExternalUsers, manifestRiderId } from "../support/riders.ts";
import { type Received, VerificationServer } from "../support/verification-server.ts";

const AUTH = "/external-users-auth/v1";
const UNKNOWN_OPERATOR = "cccccccc-0000-4000-8000-000000000003";
const SOME_UUID = "0b9c6a1e-1111-4222-8333-444455556666";
const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
/** Plenty for one suite: the rate limits have their own describe below. */
const PLENTY = { burst: 100_000, perMinute: 100_000 };
const NO_LIMITS = {
  signUp: { perOperator: PLENTY, perAddress: PLENTY },
  signIn: { perOperator: PLENTY, perAddress: PLENTY },
};

type Json = Record<string, unknown>;

function expectSpecError(res: LightMyRequestResponse, status: number, code: string): Json {
  expect(res.statusCode, res.body).toBe(status);
  expect(res.headers["content-type"]).toMatch(/^application\/json/);
  const body = res.json() as Json;
  expect(Object.keys(body).sort()).toEqual(["correlation_id", "error_code", "error_message", "status_code"]);
  expect(body).toMatchObject({ status_code: status, error_code: code });
  expect(body.correlation_id).toBe(res.headers["x-correlation-id"]);
  return body;
}

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const s = createServer().listen(0, "127.0.0.1");
  await once(s, "listening");
  const { port } = s.address() as AddressInfo;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

/** Lets pending I/O callbacks run, to show that nothing settles until the clock moves. */
async function ioTurns(n = 20) {
  for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
}

function harnessHelpers(getH: () => CloudHarness, server: VerificationServer) {
  const post = (path: string, payload?: unknown, extra: Partial<InjectOptions> = {}) =>
    getH().app.inject({
      method: "POST",
      url: `${AUTH}/${path}`,
      ...(payload === undefined ? {} : { payload: payload as Json }),
      ...extra,
    });
  const signUp = (userId: string, operatorId = OP_A, extra: Partial<InjectOptions> = {}) =>
    post("sign-up", { user_id: userId, operator_id: operatorId }, extra);
  const serviceIdOf = async (userId: string, operatorId = OP_A) => {
    const user = await userRepository(getH().db).findByUserId(operatorId, userId);
    if (!user) throw new Error(`no user ${userId} of ${operatorId}`);
    return user.id;
  };
  /** What the store holds of an integrator id: its user and its live pending sign-up (ids, or undefined). */
  const stored = async (userId: string, operatorId = OP_A) => {
    const h = getH();
    const user = await userRepository(h.db).findByUserId(operatorId, userId);
    const pending = await signUpRepository(h.db).findByUserId(operatorId, userId, h.clock.now());
    return { user: user?.id, pending: pending?.id };
  };
  let nonce = 0;
  /** Signs a user up (if needed) and in through the verification server; the tokens. */
  const signIn = async (userId: string) => {
    const up = await signUp(userId);
    expect(up.statusCode, up.body).toBe(204);
    const id = await serviceIdOf(userId);
    const challenge = `nonce-${userId}-${++nonce}`;
    server.accept(userId, challenge);
    const res = await post("sign-in", { service_user_id: id, operator_id: OP_A, challenge_token: challenge });
    expect(res.statusCode, res.body).toBe(200);
    return { id, ...(res.json() as { access_token: string; refresh_token: string }) };
  };
  const asUser = (token: string, o: InjectOptions) =>
    getH().app.inject({ ...o, headers: { ...(o.headers as Json), authorization: `Bearer ${token}` } });
  /** A fresh client token: the suite moves the clock by days, past the harness's cached ones. */
  const clientToken = (clientId: string) => getH().freshToken(clientId);
  const asClient = async (clientId: string, o: InjectOptions) => asUser(await clientToken(clientId), o);
  return { post, signUp, serviceIdOf, stored, signIn, asUser, asClient, clientToken };
}

describe("external users", () => {
  let h: CloudHarness;
  // Checks every callback's signature as an integrator must: a callback not signed right answers 401.
  const server = new VerificationServer({ secrets: [CALLBACK_SECRET], now: () => h.clock.now() });
  const { post, signUp, serviceIdOf, stored, signIn, asUser, asClient, clientToken } = harnessHelpers(
    () => h,
    server,
  );

  beforeAll(async () => {
    await server.start();
    h = await startCloudHarness({ externalUsers: { rateLimits: NO_LIMITS } });
    await declareExternalUsers(h, { operatorId: OP_A, base: server.url, allowPrivateAddresses: true });
  });
  afterAll(async () => {
    await h.close();
    await server.stop();
  });
  afterEach(() => server.reset());

  /** The callback at `path` hangs: the request settles only when the clock reaches 5 s, with 504. */
  async function expectTimeoutAt5s(
    path: "/sign-up" | "/sign-in",
    send: () => Promise<LightMyRequestResponse>,
  ) {
    server.behave(path, "hang");
    const arrived = server.next(path);
    let settled = false;
    const pending = send().finally(() => {
      settled = true;
    });
    await arrived;
    h.clock.advance(4_999);
    await ioTurns();
    expect(settled).toBe(false);
    h.clock.advance(1);
    expectSpecError(await pending, 504, "ERRORS.SERVICE_TIMED_OUT");
  }

  describe("sign-up", () => {
    it("calls the operator back with user_id and service_user_id, signed, and once accepted makes the user and answers 204", async () => {
      const arrived = server.next("/sign-up");
      const res = await signUp("ann");
      expect(res.statusCode, res.body).toBe(204);
      expect(res.body).toBe("");
      const id = await serviceIdOf("ann");
      expect(id).toMatch(UUID_RE);
      const cb = await arrived;
      expect(cb.body).toEqual({ user_id: "ann", service_user_id: id, bikeep_user_id: id });
      expect(cb.headers["content-type"]).toBe("application/json");
      expect(cb.signature).toBe("valid");
      expect(await stored("ann")).toEqual({ user: id, pending: undefined });
    });

    it("keeps the same service_user_id on a repeated sign-up and calls back again", async () => {
      await signUp("bea");
      const id = await serviceIdOf("bea");
      const before = server.count("/sign-up");
      const again = server.next("/sign-up");
      expect((await signUp("bea")).statusCode).toBe(204);
      expect((await again).body.service_user_id).toBe(id);
      expect(server.count("/sign-up")).toBe(before + 1);
      expect(await stored("bea")).toEqual({ user: id, pending: undefined });
    });

    it("makes no user while the callback answers 5xx (500 OPERATOR_ERROR); a repeat calls back with the same id and then makes it", async () => {
      server.behave("/sign-up", { status: 503, body: { secret: "internal detail" } });
      const first = server.next("/sign-up");
      const res = await signUp("cid");
      const body = expectSpecError(res, 500, "ERRORS.OPERATOR_ERROR");
      expect(String(body.error_message)).not.toContain("internal detail");
      const id = String((await first).body.service_user_id);
      expect(id).toMatch(UUID_RE);
      // Not a user, only the id kept for the repeat (spec: sign-up step 5).
      expect(await stored("cid")).toEqual({ user: undefined, pending: id });
      const second = server.next("/sign-up");
      expectSpecError(await signUp("cid"), 500, "ERRORS.OPERATOR_ERROR");
      expect((await second).body.service_user_id).toBe(id);
      server.reset();
      const again = server.next("/sign-up");
      expect((await signUp("cid")).statusCode).toBe(204);
      expect((await again).body.service_user_id).toBe(id);
      expect(await stored("cid")).toEqual({ user: id, pending: undefined });
    });

    it("answers a 4xx of the callback with 400 OPERATOR_REJECTION and keeps nothing of the sign-up", async () => {
      const ids = new Set<unknown>();
      for (const status of [400, 403, 409, 422]) {
        server.behave("/sign-up", { status });
        const arrived = server.next("/sign-up");
        expectSpecError(await signUp("dan"), 400, "ERRORS.OPERATOR_REJECTION");
        ids.add((await arrived).body.service_user_id);
        expect(await stored("dan")).toEqual({ user: undefined, pending: undefined });
      }
      // Each try starts afresh: a rejected id is never offered again.
      expect(ids.size).toBe(4);
    });

    it("keeps a user the operator accepted before when it rejects a repeat", async () => {
      await signUp("dee");
      const id = await serviceIdOf("dee");
      server.behave("/sign-up", { status: 409 });
      expectSpecError(await signUp("dee"), 400, "ERRORS.OPERATOR_REJECTION");
      expect(await stored("dee")).toEqual({ user: id, pending: undefined });
    });

    it("keeps a sign-up the operator did not answer for a day: the same id until then, a new one after", async () => {
      server.behave("/sign-up", { status: 500 });
      const first = server.next("/sign-up");
      await signUp("dot");
      const id = String((await first).body.service_user_id);
      h.clock.advance(PENDING_SIGN_UP_TTL_MS - 1_000);
      const before = server.next("/sign-up");
      await signUp("dot");
      expect((await before).body.service_user_id).toBe(id);
      h.clock.advance(1_000);
      const after = server.next("/sign-up");
      await signUp("dot");
      const fresh = String((await after).body.service_user_id);
      expect(fresh).not.toBe(id);
      expect(await stored("dot")).toEqual({ user: undefined, pending: fresh });
      // The forgotten id signs in as nobody's.
      server.accept("dot", "n-dot");
      expectSpecError(
        await post("sign-in", { service_user_id: id, operator_id: OP_A, challenge_token: "n-dot" }),
        400,
        "ERRORS.FAILED_TO_SIGN_IN",
      );
    });

    it("lets the integrator go straight to sign-in after a failed callback: the operator's verification makes the user", async () => {
      server.behave("/sign-up", "hang");
      const arrived = server.next("/sign-up");
      const pending = signUp("deb");
      const id = String((await arrived).body.service_user_id);
      h.clock.advance(5_000);
      expectSpecError(await pending, 504, "ERRORS.SERVICE_TIMED_OUT");
      server.reset();
      // The operator's server did store the mapping before the answer was lost.
      server.know("deb", id);
      server.accept("deb", "n-deb");
      const asked = server.next("/sign-in");
      const res = await post("sign-in", { service_user_id: id, operator_id: OP_A, challenge_token: "n-deb" });
      expect(res.statusCode, res.body).toBe(200);
      expect((await asked).body).toEqual({ user_id: "deb", challenge_token: "n-deb" });
      expect(await stored("deb")).toEqual({ user: id, pending: undefined });
      expect(decodeJwt(String(res.json().access_token))).toMatchObject({ sub: id, op: OP_A, kind: "user" });
    });

    it("makes no user from a pending sign-up whose sign-in the operator refuses", async () => {
      server.behave("/sign-up", { status: 502 });
      const arrived = server.next("/sign-up");
      await signUp("dax");
      const id = String((await arrived).body.service_user_id);
      server.reset();
      expectSpecError(
        await post("sign-in", { service_user_id: id, operator_id: OP_A, challenge_token: "not-registered" }),
        400,
        "ERRORS.FAILED_TO_SIGN_IN",
      );
      expect(await stored("dax")).toEqual({ user: undefined, pending: id });
    });

    it("follows no redirect: a 3xx is an answer below 400, and its target is never called", async () => {
      server.behave("/sign-up", { status: 302, headers: { location: `${server.url}/elsewhere` } });
      expect((await signUp("eve")).statusCode).toBe(204);
      expect(server.count("/elsewhere")).toBe(0);
    });

    it("answers 504 SERVICE_TIMED_OUT when the callback gets no answer within 5 s of the clock", async () => {
      await expectTimeoutAt5s("/sign-up", () => signUp("fay"));
      expect(await stored("fay")).toMatchObject({ user: undefined, pending: expect.stringMatching(UUID_RE) });
    });

    it("answers 500 OPERATOR_ERROR when the operator's server cannot be reached", async () => {
      const port = await closedPort();
      await declareExternalUsers(h, { operatorId: OP_B, base: `http://127.0.0.1:${port}` });
      expectSpecError(await signUp("gus", OP_B), 500, "ERRORS.OPERATOR_ERROR");
    });

    it.each([
      ["no body", undefined],
      ["an empty object", {}],
      ["an empty operator_id", { operator_id: "", user_id: "x" }],
      ["a blank operator_id", { operator_id: "  ", user_id: "x" }],
      ["a numeric operator_id", { operator_id: 7, user_id: "x" }],
      ["a JSON array", [OP_A]],
    ])("answers %s with 400 MISSING_OPERATOR_ID", async (_name, body) => {
      expectSpecError(await post("sign-up", body), 400, "ERRORS.MISSING_OPERATOR_ID");
    });

    it.each([
      ["no user_id", { operator_id: OP_A }],
      ["an empty user_id", { operator_id: OP_A, user_id: "" }],
      ["a null user_id", { operator_id: OP_A, user_id: null }],
    ])("answers %s with 400 MISSING_USER_ID", async (_name, body) => {
      expectSpecError(await post("sign-up", body), 400, "ERRORS.MISSING_USER_ID");
    });

    it("answers a malformed operator_id with 400 INVALID_OPERATOR_ID", async () => {
      expectSpecError(
        await post("sign-up", { operator_id: "not-a-uuid", user_id: "x" }),
        400,
        "ERRORS.INVALID_OPERATOR_ID",
      );
    });

    it("answers an unknown operator, or one without external users, with 400 FAILED_TO_SIGN_UP and no callback", async () => {
      const before = server.received.length;
      expectSpecError(await signUp("x", UNKNOWN_OPERATOR), 400, "ERRORS.FAILED_TO_SIGN_UP");
      expect(server.received.length).toBe(before);
      expect(await stored("x", UNKNOWN_OPERATOR)).toEqual({ user: undefined, pending: undefined });
    });

    it("answers a user_id over 255 characters with 400 FAILED_TO_SIGN_UP", async () => {
      expectSpecError(await signUp("u".repeat(256)), 400, "ERRORS.FAILED_TO_SIGN_UP");
      expect((await signUp("u".repeat(255))).statusCode).toBe(204);
    });

    it("answers a body that is not JSON with 415", async () => {
      const res = await post("sign-up", "user_id=x", { headers: { "content-type": "text/plain" } });
      expect(res.statusCode).toBe(415);
    });
  });

  describe("sign-in", () => {
    it("asks the operator with user_id and challenge_token and returns an access and a refresh token", async () => {
      await signUp("hal");
      const id = await serviceIdOf("hal");
      server.accept("hal", "n-1");
      const arrived = server.next("/sign-in");
      const res = await post("sign-in", { service_user_id: id, operator_id: OP_A, challenge_token: "n-1" });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.headers["cache-control"]).toBe("no-store");
      const body = res.json() as Json;
      expect(Object.keys(body).sort()).toEqual(["access_token", "refresh_token"]);
      expect((await arrived).body).toEqual({ user_id: "hal", challenge_token: "n-1" });
      const claims = decodeJwt(String(body.access_token));
      expect(claims).toMatchObject({ sub: id, op: OP_A, kind: "user", iss: ISSUER });
      expect(Number(claims.exp) - Number(claims.iat)).toBe(3600);
      expect(String(body.refresh_token).length).toBeGreaterThanOrEqual(43);
    });

    it("accepts bikeep_user_id for service_user_id, upper-case ids, and an answer naming bikeep_user_id", async () => {
      await signUp("ivy");
      const id = await serviceIdOf("ivy");
      server.accept("ivy", "n-2");
      const res = await post("sign-in", {
        bikeep_user_id: id.toUpperCase(),
        operator_id: OP_A.toUpperCase(),
        challenge_token: "n-2",
      });
      expect(res.statusCode, res.body).toBe(200);
      server.behave("/sign-in", { status: 200, body: { bikeep_user_id: id } });
      const res2 = await post("sign-in", { service_user_id: id, operator_id: OP_A, challenge_token: "n-3" });
      expect(res2.statusCode, res2.body).toBe(200);
    });

    it("refuses service_user_id and bikeep_user_id naming different users with 400 INVALID_BIKEEP_USER_ID", async () => {
      const id = await serviceIdOf("ivy");
      expectSpecError(
        await post("sign-in", {
          service_user_id: id,
          bikeep_user_id: SOME_UUID,
          operator_id: OP_A,
          challenge_token: "n",
        }),
        400,
        "ERRORS.INVALID_BIKEEP_USER_ID",
      );
    });

    it("answers a 4xx of the callback (a bad nonce) with 400 FAILED_TO_SIGN_IN", async () => {
      await signUp("jon");
      const id = await serviceIdOf("jon");
      const res = await post("sign-in", { service_user_id: id, operator_id: OP_A, challenge_token: "wrong" });
      expectSpecError(res, 400, "ERRORS.FAILED_TO_SIGN_IN");
      expect(server.received.at(-1)?.path).toBe("/sign-in");
    });

    it("answers a 5xx of the callback with 500 OPERATOR_ERROR (the spec leaves it open)", async () => {
      const id = await serviceIdOf("jon");
      server.behave("/sign-in", { status: 502 });
      expectSpecError(
        await post("sign-in", { service_user_id: id, operator_id: OP_A, challenge_token: "n" }),
        500,
        "ERRORS.OPERATOR_ERROR",
      );
    });

    const refusedAnswers: [string, Parameters<VerificationServer["behave"]>[1]][] = [
      ["another user's id", { status: 200, body: { service_user_id: SOME_UUID } }],
      ["an id that is not a UUID", { status: 200, body: { service_user_id: "jon" } }],
      ["no id", { status: 200, body: {} }],
      ["a JSON array", { status: 200, body: [] }],
      ["a body that is not JSON", { status: 200, body: "ok" }],
      ["a 5 MB body", { status: 200, body: `{"pad":"${"x".repeat(5 * 1024 * 1024)}"}` }],
    ];
    it.each(refusedAnswers)(
      "answers a callback answering %s with 400 FAILED_TO_SIGN_IN",
      async (_n, answer) => {
        const id = await serviceIdOf("jon");
        server.behave("/sign-in", answer);
        expectSpecError(
          await post("sign-in", { service_user_id: id, operator_id: OP_A, challenge_token: "n" }),
          400,
          "ERRORS.FAILED_TO_SIGN_IN",
        );
      },
    );

    it("follows no redirect: a 302 (even one carrying the right id) is 400 FAILED_TO_SIGN_IN, its target not called", async () => {
      const id = await serviceIdOf("jon");
      server.behave("/sign-in", {
        status: 302,
        headers: { location: `${server.url}/elsewhere` },
        body: { service_user_id: id },
      });
      expectSpecError(
        await post("sign-in", { service_user_id: id, operator_id: OP_A, challenge_token: "n" }),
        400,
        "ERRORS.FAILED_TO_SIGN_IN",
      );
      expect(server.count("/elsewhere")).toBe(0);
    });

    it("answers 504 SERVICE_TIMED_OUT after 5 s without an answer", async () => {
      const id = await serviceIdOf("jon");
      await expectTimeoutAt5s("/sign-in", () =>
        post("sign-in", { service_user_id: id, operator_id: OP_A, challenge_token: "n" }),
      );
    });

    it.each([
      ["no operator_id", { service_user_id: SOME_UUID, challenge_token: "n" }],
      ["an empty operator_id", { operator_id: "", service_user_id: SOME_UUID, challenge_token: "n" }],
      ["a malformed operator_id", { operator_id: "op-a", service_user_id: SOME_UUID, challenge_token: "n" }],
    ])("answers %s with 400 INVALID_OPERATOR_ID", async (_n, body) => {
      expectSpecError(await post("sign-in", body), 400, "ERRORS.INVALID_OPERATOR_ID");
    });

    it.each([
      ["no service_user_id", { operator_id: OP_A, challenge_token: "n" }],
      ["a malformed service_user_id", { operator_id: OP_A, service_user_id: "ann", challenge_token: "n" }],
      ["a malformed bikeep_user_id", { operator_id: OP_A, bikeep_user_id: "ann", challenge_token: "n" }],
    ])("answers %s with 400 INVALID_BIKEEP_USER_ID", async (_n, body) => {
      expectSpecError(await post("sign-in", body), 400, "ERRORS.INVALID_BIKEEP_USER_ID");
    });

    it.each([
      ["no challenge_token", { operator_id: OP_A, service_user_id: SOME_UUID }],
      ["an empty challenge_token", { operator_id: OP_A, service_user_id: SOME_UUID, challenge_token: "" }],
      ["a blank challenge_token", { operator_id: OP_A, service_user_id: SOME_UUID, challenge_token: " " }],
      [
        "a challenge_token over 4096 characters",
        { operator_id: OP_A, service_user_id: SOME_UUID, challenge_token: "n".repeat(4097) },
      ],
    ])("answers %s with 400 INVALID_CHALLENGE_TOKEN", async (_n, body) => {
      expectSpecError(await post("sign-in", body), 400, "ERRORS.INVALID_CHALLENGE_TOKEN");
    });

    it("answers an unknown user, or a user of another operator, with 400 FAILED_TO_SIGN_IN and no callback", async () => {
      const before = server.received.length;
      expectSpecError(
        await post("sign-in", { operator_id: OP_A, service_user_id: SOME_UUID, challenge_token: "n" }),
        400,
        "ERRORS.FAILED_TO_SIGN_IN",
      );
      const id = await serviceIdOf("jon");
      expectSpecError(
        await post("sign-in", { operator_id: UNKNOWN_OPERATOR, service_user_id: id, challenge_token: "n" }),
        400,
        "ERRORS.FAILED_TO_SIGN_IN",
      );
      expect(server.received.length).toBe(before);
    });

    it("answers an unknown id exactly as a refused verification or a mismatch: one status, code and message", async () => {
      await signUp("jen");
      const id = await serviceIdOf("jen");
      const ask = (serviceUserId: string) =>
        post("sign-in", { service_user_id: serviceUserId, operator_id: OP_A, challenge_token: "wrong" });
      const shape = (res: LightMyRequestResponse) => {
        const { correlation_id: _c, ...body } = res.json() as Json;
        const { date: _d, "x-correlation-id": _x, ...headers } = res.headers;
        return { status: res.statusCode, headers, body };
      };
      const refused = await ask(id);
      const unknown = await ask(SOME_UUID);
      server.behave("/sign-in", { status: 200, body: { service_user_id: SOME_UUID } });
      const mismatch = await ask(id);
      server.behave("/sign-in", { status: 200, body: "not json" });
      const garbled = await ask(id);
      expectSpecError(refused, 400, "ERRORS.FAILED_TO_SIGN_IN");
      expect(refused.json().error_message).toBe(SIGN_IN_FAILED);
      for (const other of [unknown, mismatch, garbled]) expect(shape(other)).toEqual(shape(refused));
      expect(unknown.json().correlation_id).not.toBe(refused.json().correlation_id);
    });

    it("learns the user's phone number from the answer: kept when absent, forgotten on null, an invalid one ignored", async () => {
      await signUp("kim");
      const id = await serviceIdOf("kim");
      const phone = async () => (await userRepository(h.db).find(OP_A, id))?.phoneNumber;
      const signInWith = async (answer: Json) => {
        server.behave("/sign-in", { status: 200, body: { service_user_id: id, ...answer } });
        const res = await post("sign-in", { service_user_id: id, operator_id: OP_A, challenge_token: "n" });
        expect(res.statusCode, res.body).toBe(200);
      };
      await signInWith({ phone_number: "+31612345678" });
      expect(await phone()).toBe("+31612345678");
      await signInWith({});
      expect(await phone()).toBe("+31612345678");
      await signInWith({ phone_number: "0612345678" });
      expect(await phone()).toBe("+31612345678");
      await signInWith({ phone_number: null });
      expect(await phone()).toBeNull();
    });
  });

  describe("refresh", () => {
    it("returns only a new access token, and the refresh token stays valid for later refreshes", async () => {
      const s = await signIn("lea");
      for (let i = 0; i < 3; i++) {
        h.clock.advance(60_000);
        const res = await post("refresh", { service_user_id: s.id, refresh_token: s.refresh_token });
        expect(res.statusCode, res.body).toBe(200);
        expect(res.headers["cache-control"]).toBe("no-store");
        const body = res.json() as Json;
        expect(Object.keys(body)).toEqual(["access_token"]);
        expect(decodeJwt(String(body.access_token))).toMatchObject({ sub: s.id, op: OP_A, kind: "user" });
        const locations = await asUser(String(body.access_token), {
          method: "GET",
          url: "/location/v1/locations",
        });
        expect(locations.statusCode).toBe(200);
      }
    });

    it("accepts bikeep_user_id and a matching operator_id", async () => {
      const s = await signIn("max");
      const res = await post("refresh", {
        bikeep_user_id: s.id,
        refresh_token: s.refresh_token,
        operator_id: OP_A,
      });
      expect(res.statusCode, res.body).toBe(200);
    });

    it.each([
      ["no refresh_token", {}],
      ["an empty refresh_token", { refresh_token: "" }],
      ["a short refresh_token", { refresh_token: "abc123" }],
      ["a refresh_token of 31 characters", { refresh_token: "r".repeat(31) }],
    ])("answers %s with 400 INVALID_REFRESH_TOKEN", async (_n, body) => {
      expectSpecError(
        await post("refresh", { service_user_id: SOME_UUID, ...body }),
        400,
        "ERRORS.INVALID_REFRESH_TOKEN",
      );
    });

    it("answers an unknown token, another user's token, or another operator with 400 AUTHENTICATION_FAILED (S20)", async () => {
      const a = await signIn("ned");
      const b = await signIn("ola");
      const cases: Json[] = [
        { service_user_id: a.id, refresh_token: "r".repeat(43) },
        { service_user_id: b.id, refresh_token: a.refresh_token },
        { service_user_id: a.id, refresh_token: a.refresh_token, operator_id: OP_B },
        { service_user_id: a.id, refresh_token: a.refresh_token, operator_id: "not-a-uuid" },
        { service_user_id: "ned", refresh_token: a.refresh_token },
        { refresh_token: a.refresh_token },
        // Tokens of other kinds are not refresh tokens.
        { service_user_id: a.id, refresh_token: a.access_token },
        { service_user_id: a.id, refresh_token: await clientToken(CLIENTS.admin) },
      ];
      for (const body of cases)
        expectSpecError(await post("refresh", body), 400, "ERRORS.AUTHENTICATION_FAILED");
      expect(
        (await post("refresh", { service_user_id: a.id, refresh_token: a.refresh_token })).statusCode,
      ).toBe(200);
    });

    it("keeps only hashes of refresh tokens in the store", async () => {
      const s = await signIn("pia");
      const rows = await refreshTokenRepository(h.db).ofRider(s.id);
      expect(rows).toHaveLength(1);
      expect(JSON.stringify(rows)).not.toContain(s.refresh_token);
      expect(rows[0]?.tokenHash).toBe(createHash("sha256").update(s.refresh_token).digest("hex"));
      expect(rows[0]?.operatorId).toBe(OP_A);
    });

    it("refuses a token revoked by the operator with 400 AUTHENTICATION_FAILED; a new sign-in works again", async () => {
      const s = await signIn("quin");
      const other = await signIn("rae");
      const result = await revokeRiderTokens(h.db, { operatorId: OP_A, userId: "quin" }, h.clock.now());
      expect(result?.revoked).toBe(1);
      expectSpecError(
        await post("refresh", { service_user_id: s.id, refresh_token: s.refresh_token }),
        400,
        "ERRORS.AUTHENTICATION_FAILED",
      );
      expect(
        (await post("refresh", { service_user_id: other.id, refresh_token: other.refresh_token })).statusCode,
      ).toBe(200);
      expect(await revokeRiderTokens(h.db, { operatorId: OP_B, userId: "quin" }, h.clock.now())).toBeNull();
      const again = await signIn("quin");
      expect(
        (await post("refresh", { service_user_id: s.id, refresh_token: again.refresh_token })).statusCode,
      ).toBe(200);
    });

    it("refuses a refresh token 90 days after its sign-in", async () => {
      const s = await signIn("sam");
      h.clock.advance(REFRESH_TOKEN_TTL_MS - 1_000);
      expect(
        (await post("refresh", { service_user_id: s.id, refresh_token: s.refresh_token })).statusCode,
      ).toBe(200);
      h.clock.advance(1_000);
      expectSpecError(
        await post("refresh", { service_user_id: s.id, refresh_token: s.refresh_token }),
        400,
        "ERRORS.AUTHENTICATION_FAILED",
      );
    });

    it("keeps earlier sign-ins' tokens valid, up to ten; an eleventh sign-in ends the oldest", async () => {
      const sessions: Awaited<ReturnType<typeof signIn>>[] = [];
      for (let i = 0; i < 11; i++) {
        sessions.push(await signIn("tom"));
        h.clock.advance(1_000);
      }
      const refresh = (t: string) => post("refresh", { service_user_id: sessions[0]?.id, refresh_token: t });
      expectSpecError(await refresh(sessions[0]!.refresh_token), 400, "ERRORS.AUTHENTICATION_FAILED");
      for (const s of sessions.slice(1)) expect((await refresh(s.refresh_token)).statusCode).toBe(200);
      expect(await refreshTokenRepository(h.db).ofRider(sessions[0]!.id)).toHaveLength(10);
    });

    it("gives sign-ins made at once (their tokens committed together) each its own working refresh token", async () => {
      const sessions = await Promise.all(["vic", "wes", "xan", "yul"].map((u) => signIn(u)));
      expect(new Set(sessions.map((s) => s.refresh_token)).size).toBe(4);
      for (const s of sessions) {
        const res = await post("refresh", { service_user_id: s.id, refresh_token: s.refresh_token });
        expect(res.statusCode, res.body).toBe(200);
      }
    });
  });

  describe("a rider's access token", () => {
    it("reads the operator's locations and devices without restricted fields", async () => {
      const s = await signIn("uma");
      const list = await asUser(s.access_token, { method: "GET", url: "/location/v1/locations" });
      expect(list.statusCode).toBe(200);
      const locations = (list.json() as { data: Json[] }).data;
      expect(locations.length).toBeGreaterThan(0);
      for (const l of locations) {
        expect(l).not.toHaveProperty("comment");
        expect(l).not.toHaveProperty("private_tags");
        expect(l).not.toHaveProperty("operator_id");
      }
      const device = await asUser(s.access_token, {
        method: "GET",
        url: `/device/v1/devices/${fx.device("L1", "1")}`,
      });
      expect(device.statusCode).toBe(200);
      expect(device.json()).not.toHaveProperty("user");
      expect(device.json()).not.toHaveProperty("settings");
    });

    it("finds nothing of another operator (404)", async () => {
      const s = await signIn("uma");
      for (const url of [
        `/location/v1/locations/${fx.location("B1")}`,
        `/device/v1/devices/${fx.device("B1", "1")}`,
        `/device/v1/locations/${fx.location("B1")}/devices`,
      ]) {
        const res = await asUser(s.access_token, { method: "GET", url });
        if (url.endsWith("/devices")) {
          expect(res.statusCode, url).toBe(200);
          expect((res.json() as { data: unknown[] }).data).toEqual([]);
        } else expectSpecError(res, 404, "ERRORS.NOT_FOUND");
      }
      const command = await asUser(s.access_token, {
        method: "POST",
        url: `/device/v1/devices/${fx.device("B1", "1")}/commands`,
        payload: { command: "unlock" },
      });
      expectSpecError(command, 404, "ERRORS.NOT_FOUND");
    });

    it("gets 403 on operator functions: PATCH location, force commands, sync-device", async () => {
      const s = await signIn("vic");
      const patch = await asUser(s.access_token, {
        method: "PATCH",
        url: `/location/v1/locations/${fx.location("L1")}`,
        payload: { label: "mine now" },
      });
      expectSpecError(patch, 403, "ERRORS.FORBIDDEN");
      const commands: Json[] = [
        { command: "force-lock" },
        { command: "force-unlock", reason: "OTHER", comment: "a long enough comment" },
        { command: "force-cancel-booking" },
        { command: "sync-device" },
      ];
      for (const body of commands) {
        const res = await asUser(s.access_token, {
          method: "POST",
          url: `/device/v1/devices/${fx.device("L1", "2")}/commands`,
          payload: body,
        });
        expectSpecError(res, 403, "ERRORS.FORBIDDEN");
      }
      const label = await asClient(CLIENTS.admin, {
        method: "GET",
        url: `/location/v1/locations/${fx.location("L1")}`,
      });
      expect(label.json()).toMatchObject({ label: "Lockers one" });
      expect(h.gateways.commands).toEqual([]);
    });

    it("sees its own commands but not another rider's (404); the operator's client sees both", async () => {
      const a = await signIn("wes");
      const b = await signIn("xia");
      const sent = await asUser(a.access_token, {
        method: "POST",
        url: `/device/v1/devices/${fx.device("L1", "3")}/commands`,
        payload: { command: "lock" },
      });
      expect(sent.statusCode, sent.body).toBe(200);
      const id = String((sent.json() as Json).id);
      const url = `/device/v1/commands/${id}`;
      expect((await asUser(a.access_token, { method: "GET", url })).statusCode).toBe(200);
      expectSpecError(await asUser(b.access_token, { method: "GET", url }), 404, "ERRORS.NOT_FOUND");
      expect((await asClient(CLIENTS.admin, { method: "GET", url })).statusCode).toBe(200);
      // Another rider's command answers exactly like one that does not exist.
      const unknown = await asUser(b.access_token, {
        method: "GET",
        url: `/device/v1/commands/${SOME_UUID}`,
      });
      const hidden = await asUser(b.access_token, { method: "GET", url });
      expect(String(hidden.json().error_message).replace(id, "ID")).toBe(
        String(unknown.json().error_message).replace(SOME_UUID, "ID"),
      );
    });

    it("cannot pass for a client token, nor a client token for a rider's, whatever the claims say", async () => {
      const s = await signIn("yan");
      const [head, payload, sig] = s.access_token.split(".") as [string, string, string];
      const claims = JSON.parse(Buffer.from(payload, "base64url").toString()) as Json;
      const relabelled = Buffer.from(
        JSON.stringify({ ...claims, kind: "client", perms: ["SUPERADMIN"] }),
      ).toString("base64url");
      const get = { method: "GET" as const, url: "/location/v1/locations" };
      expectSpecError(await asUser(`${head}.${relabelled}.${sig}`, get), 401, "ERRORS.INVALID_TOKEN");

      // Claims of one kind signed with the other kind's key.
      const now = Math.floor(h.clock.now().getTime() / 1000);
      const sign = (kind: string, key: Uint8Array) =>
        new SignJWT({ op: OP_A, kind })
          .setProtectedHeader({ alg: "HS256", typ: "JWT" })
          .setIssuer(ISSUER)
          .setSubject(s.id)
          .setIssuedAt(now)
          .setExpirationTime(now + 3600)
          .sign(key);
      expectSpecError(await asUser(await sign("user", TOKEN_SECRET), get), 401, "ERRORS.INVALID_TOKEN");
      const [ch, cp, cs] = (await clientToken(CLIENTS.basic)).split(".") as [string, string, string];
      const asRider = Buffer.from(
        JSON.stringify({ ...JSON.parse(Buffer.from(cp, "base64url").toString()), kind: "user" }),
      ).toString("base64url");
      expectSpecError(await asUser(`${ch}.${asRider}.${cs}`, get), 401, "ERRORS.INVALID_TOKEN");
    });

    it("expires an hour after sign-in", async () => {
      const s = await signIn("zoe");
      const get = { method: "GET" as const, url: "/location/v1/locations" };
      h.clock.advance(3_599_000);
      expect((await asUser(s.access_token, get)).statusCode).toBe(200);
      h.clock.advance(2_000);
      expectSpecError(await asUser(s.access_token, get), 401, "ERRORS.INVALID_TOKEN");
    });
  });
});

describe("external users: callback addresses", () => {
  const server = new VerificationServer();
  let h: CloudHarness;
  const { signUp, post } = harnessHelpers(() => h, server);

  beforeAll(async () => {
    await server.start();
    h = await startCloudHarness({ externalUsers: { rateLimits: NO_LIMITS } });
  });
  afterAll(async () => {
    await h.close();
    await server.stop();
  });

  const PRIVATE_BASES = [
    ["a loopback IPv4 literal", "https://127.0.0.1:PORT"],
    ["a loopback IPv6 literal", "https://[::1]:PORT"],
    ["a name that resolves to loopback", "https://localhost:PORT"],
    ["a private address", "https://10.0.0.5:PORT"],
    ["a link-local address (cloud metadata)", "https://169.254.169.254"],
    ["an IPv4-mapped loopback", "https://[::ffff:127.0.0.1]:PORT"],
    ["the unspecified address", "https://0.0.0.0:PORT"],
  ] as const;

  it.each(PRIVATE_BASES)(
    "refuses %s in the manifest unless the operator allows private addresses",
    async (_n, base) => {
      const declare = (allow: boolean) =>
        declareExternalUsers(h, {
          operatorId: OP_A,
          base: base.replace("PORT", String(server.port)),
          allowPrivateAddresses: allow,
        });
      await expect(declare(false)).rejects.toThrow(/not a public address|a local name/);
      await expect(declare(true)).resolves.toBeUndefined();
    },
  );

  it.each(PRIVATE_BASES)(
    "refuses %s at the call as well (a store that holds it unchecked): 500 OPERATOR_ERROR, nothing sent",
    async (_n, base) => {
      await declareExternalUsers(h, {
        operatorId: OP_A,
        base: base.replace("PORT", String(server.port)),
        allowPrivateAddresses: false,
        uncheckedAddresses: true,
        riders: [{ user_id: "ann" }],
      });
      const before = server.received.length;
      expectSpecError(await signUp("ann"), 500, "ERRORS.OPERATOR_ERROR");
      expectSpecError(
        await post("sign-in", {
          service_user_id: manifestRiderId(OP_A, "ann"),
          operator_id: OP_A,
          challenge_token: "n",
        }),
        500,
        "ERRORS.OPERATOR_ERROR",
      );
      expect(server.received.length).toBe(before);
    },
  );

  it("reaches the same loopback server once the operator allows private addresses", async () => {
    await declareExternalUsers(h, { operatorId: OP_A, base: server.url, allowPrivateAddresses: true });
    expect((await signUp("ann")).statusCode).toBe(204);
  });

  it("refuses plain http in the manifest unless private addresses are allowed", () => {
    const manifest = (allow: boolean) => ({
      version: 1,
      operators: [
        {
          id: OP_A,
          name: "A",
          external_users: {
            sign_up_url: "http://verify.example/sign-up",
            sign_in_url: "https://verify.example/sign-in",
            allow_private_addresses: allow,
            secret: CALLBACK_SECRET,
          },
        },
      ],
    });
    const refused = SiteManifest.safeParse(manifest(false));
    expect(refused.success).toBe(false);
    expect(JSON.stringify(refused.error?.issues)).toContain("sign_up_url");
    expect(SiteManifest.safeParse(manifest(true)).success).toBe(true);
  });
});

describe("external users: rate limits", () => {
  const from = (remoteAddress: string) => ({ remoteAddress });

  describe("the default budgets", () => {
    let h: CloudHarness;
    const server = new VerificationServer({ secrets: [CALLBACK_SECRET], now: () => h.clock.now() });
    const { signUp, post, stored } = harnessHelpers(() => h, server);
    const REAL = "rider-real";

    beforeAll(async () => {
      await server.start();
      h = await startCloudHarness();
      await declareExternalUsers(h, { operatorId: OP_A, base: server.url, riders: [{ user_id: REAL }] });
      server.know(REAL, manifestRiderId(OP_A, REAL));
    });
    afterAll(async () => {
      await h.close();
      await server.stop();
    });
    afterEach(() => server.reset());

    it("are the documented ones: sign-up 60/min per operator and 30 per address, sign-in 120 and 60", () => {
      expect(DEFAULT_RATE_LIMITS).toEqual({
        signUp: { perOperator: { burst: 60, perMinute: 60 }, perAddress: { burst: 30, perMinute: 30 } },
        signIn: { perOperator: { burst: 120, perMinute: 120 }, perAddress: { burst: 60, perMinute: 60 } },
      });
    });

    it("let a flood of 61 sign-ups with invented ids from one address keep nothing and starve no rider's sign-in", async () => {
      // The operator knows none of the invented ids and rejects them, as an integrator's server does.
      server.behave("/sign-up", { status: 404, body: { error: "no such user" } });
      const statuses: number[] = [];
      let limited: LightMyRequestResponse | undefined;
      for (let i = 0; i < 61; i++) {
        const res = await signUp(`invented-${i}`, OP_A, from("203.0.113.66"));
        statuses.push(res.statusCode);
        if (res.statusCode === 429) limited ??= res;
      }
      const perAddress = DEFAULT_RATE_LIMITS.signUp.perAddress.burst;
      expect(statuses.slice(0, perAddress)).toEqual(Array(perAddress).fill(400));
      expect(statuses.slice(perAddress)).toEqual(Array(61 - perAddress).fill(429));
      expectSpecError(limited as LightMyRequestResponse, 429, "ERRORS.RATE_LIMITED");
      expect(limited?.headers["retry-after"]).toBe("2");
      expect(server.count("/sign-up")).toBe(perAddress);
      // Nothing the operator did not accept is kept: no user, no pending sign-up.
      for (let i = 0; i < 61; i++)
        expect(await stored(`invented-${i}`)).toEqual({ user: undefined, pending: undefined });
      server.reset();

      // A real rider signs in from another address, and from the flooding one: sign-in has its own budget.
      for (const [i, address] of ["198.51.100.7", "203.0.113.66"].entries()) {
        server.accept(REAL, `nonce-real-${i}`);
        const res = await post(
          "sign-in",
          {
            service_user_id: manifestRiderId(OP_A, REAL),
            operator_id: OP_A,
            challenge_token: `nonce-real-${i}`,
          },
          from(address),
        );
        expect(res.statusCode, res.body).toBe(200);
      }
      // And one address never uses up the operator's sign-up budget: another still signs a user up.
      expect((await signUp("newcomer", OP_A, from("198.51.100.8"))).statusCode).toBe(204);
      expect((await stored("newcomer")).user).toMatch(UUID_RE);
    });
  });

  describe("small budgets", () => {
    let h: CloudHarness;
    const server = new VerificationServer();
    const { signUp, post } = harnessHelpers(() => h, server);
    const small = { perOperator: { burst: 3, perMinute: 6 }, perAddress: { burst: 2, perMinute: 6 } };

    beforeAll(async () => {
      await server.start();
      h = await startCloudHarness({ externalUsers: { rateLimits: { signUp: small, signIn: small } } });
      await declareExternalUsers(h, { operatorId: OP_A, base: server.url, riders: [{ user_id: "known" }] });
      await declareExternalUsers(h, { operatorId: OP_B, base: server.url });
    });
    afterAll(async () => {
      await h.close();
      await server.stop();
    });
    // Each test starts with full buckets.
    afterEach(() => h.clock.advance(60_000));

    it("limit sign-ups per address and per operator with 429 and Retry-After, calling nobody; the limits refill", async () => {
      expect((await signUp("a1", OP_A, from("198.51.100.1"))).statusCode).toBe(204);
      expect((await signUp("a2", OP_A, from("198.51.100.1"))).statusCode).toBe(204);
      const before = server.received.length;
      const limited = await signUp("a3", OP_A, from("198.51.100.1"));
      expectSpecError(limited, 429, "ERRORS.RATE_LIMITED");
      expect(limited.headers["retry-after"]).toBe("10");
      expect(server.received.length).toBe(before);
      expect(await signUpRepository(h.db).findByUserId(OP_A, "a3", h.clock.now())).toBeUndefined();

      // Another address has its own allowance, until the operator's runs out.
      expect((await signUp("b1", OP_A, from("198.51.100.2"))).statusCode).toBe(204);
      expectSpecError(await signUp("b2", OP_A, from("198.51.100.2")), 429, "ERRORS.RATE_LIMITED");
      // Another operator is not affected.
      expect((await signUp("c1", OP_B, from("198.51.100.3"))).statusCode).toBe(204);

      h.clock.advance(10_000);
      expect((await signUp("b2", OP_A, from("198.51.100.2"))).statusCode).toBe(204);
    });

    it("limit sign-ins before the user is looked up, unknown ids included, apart from sign-ups", async () => {
      const unknown = (address: string) =>
        post(
          "sign-in",
          { service_user_id: SOME_UUID, operator_id: OP_A, challenge_token: "n" },
          from(address),
        );
      expectSpecError(await unknown("198.51.100.4"), 400, "ERRORS.FAILED_TO_SIGN_IN");
      expectSpecError(await unknown("198.51.100.4"), 400, "ERRORS.FAILED_TO_SIGN_IN");
      const limited = await unknown("198.51.100.4");
      expectSpecError(limited, 429, "ERRORS.RATE_LIMITED");
      expect(limited.headers["retry-after"]).toBe("10");
      // The operator's sign-in budget (3) runs out with a fourth from elsewhere; a known rider waits too.
      expectSpecError(await unknown("198.51.100.5"), 400, "ERRORS.FAILED_TO_SIGN_IN");
      const before = server.received.length;
      const rider = await post(
        "sign-in",
        { service_user_id: manifestRiderId(OP_A, "known"), operator_id: OP_A, challenge_token: "n" },
        from("198.51.100.6"),
      );
      expectSpecError(rider, 429, "ERRORS.RATE_LIMITED");
      expect(server.received.length).toBe(before);
      // Sign-ups have their own budgets: untouched.
      expect((await signUp("d1", OP_A, from("198.51.100.4"))).statusCode).toBe(204);
      // An unknown operator counts for the address only: the exhausted operators' buckets are not asked.
      expectSpecError(
        await post(
          "sign-in",
          { service_user_id: SOME_UUID, operator_id: UNKNOWN_OPERATOR, challenge_token: "n" },
          from("198.51.100.6"),
        ),
        400,
        "ERRORS.FAILED_TO_SIGN_IN",
      );
      h.clock.advance(10_000);
      expectSpecError(await unknown("198.51.100.4"), 400, "ERRORS.FAILED_TO_SIGN_IN");
    });

    it("count an unknown operator's requests for the address only, and no bad request at all", async () => {
      for (let i = 0; i < 5; i++) {
        const res = await signUp("", OP_A, from("198.51.100.9"));
        expectSpecError(res, 400, "ERRORS.MISSING_USER_ID");
      }
      const before = server.received.length;
      expectSpecError(
        await signUp("e1", UNKNOWN_OPERATOR, from("198.51.100.9")),
        400,
        "ERRORS.FAILED_TO_SIGN_UP",
      );
      expectSpecError(
        await signUp("e2", UNKNOWN_OPERATOR, from("198.51.100.9")),
        400,
        "ERRORS.FAILED_TO_SIGN_UP",
      );
      expectSpecError(await signUp("e3", UNKNOWN_OPERATOR, from("198.51.100.9")), 429, "ERRORS.RATE_LIMITED");
      expect(server.received.length).toBe(before);
      // The operators' own buckets were not touched by the unknown one.
      expect((await signUp("e4", OP_A, from("198.51.100.10"))).statusCode).toBe(204);
    });
  });
});

describe("external users: sign-in refusals take as long as the operator's", () => {
  let h: CloudHarness;
  const server = new VerificationServer({ secrets: [CALLBACK_SECRET], now: () => h.clock.now() });
  const { post } = harnessHelpers(() => h, server);

  beforeAll(async () => {
    await server.start();
    h = await startCloudHarness({ externalUsers: { rateLimits: NO_LIMITS } });
    await declareExternalUsers(h, { operatorId: OP_A, base: server.url, riders: [{ user_id: "tim" }] });
    server.know("tim", manifestRiderId(OP_A, "tim"));
  });
  afterAll(async () => {
    await h.close();
    await server.stop();
  });

  it("answers an unknown id no sooner than the operator took to refuse a known one (300 ms on the clock)", async () => {
    let answer!: () => void;
    const gate = new Promise<void>((resolve) => {
      answer = resolve;
    });
    server.behave("/sign-in", () => gate.then(() => ({ status: 401, body: { error: "bad nonce" } })));
    const arrived = server.next("/sign-in");
    const refusing = post("sign-in", {
      service_user_id: manifestRiderId(OP_A, "tim"),
      operator_id: OP_A,
      challenge_token: "wrong",
    });
    await arrived;
    h.clock.advance(300);
    answer();
    const refused = await refusing;
    expectSpecError(refused, 400, "ERRORS.FAILED_TO_SIGN_IN");

    let settled = false;
    const timers = h.clock.pendingTimers();
    const unknown = post("sign-in", {
      service_user_id: SOME_UUID,
      operator_id: OP_A,
      challenge_token: "wrong",
    });
    void unknown.finally(() => {
      settled = true;
    });
    // The answer waits on the clock: its timer is set once the id is found to be nobody's.
    await eventually(() => expect(h.clock.pendingTimers()).toBe(timers + 1));
    expect(settled).toBe(false);
    h.clock.advance(299);
    await ioTurns();
    expect(settled).toBe(false);
    h.clock.advance(1);
    const res = await unknown;
    expectSpecError(res, 400, "ERRORS.FAILED_TO_SIGN_IN");
    expect(res.json().error_message).toBe(refused.json().error_message);
    expect(server.count("/sign-in")).toBe(1);
  });
});

describe("external users: signed callbacks (S24)", () => {
  let h: CloudHarness;
  const server = new VerificationServer();
  const { signUp, post, serviceIdOf, stored } = harnessHelpers(() => h, server);
  const newSecret = () => `whsec_${randomBytes(32).toString("base64")}`;

  /** The stock Standard Webhooks verifier, run as if at `at`. */
  function verify(r: Received, secret: string, at: Date): unknown {
    const headers = {
      "webhook-id": String(r.headers["webhook-id"]),
      "webhook-timestamp": String(r.headers["webhook-timestamp"]),
      "webhook-signature": String(r.headers["webhook-signature"]),
    };
    vi.setSystemTime(at);
    try {
      return new Webhook(secret).verify(r.raw, headers);
    } finally {
      vi.useRealTimers();
    }
  }

  beforeAll(async () => {
    await server.start();
    h = await startCloudHarness({ externalUsers: { rateLimits: NO_LIMITS } });
  });
  beforeEach(() => declareExternalUsers(h, { operatorId: OP_A, base: server.url }));
  afterAll(async () => {
    await h.close();
    await server.stop();
  });
  afterEach(() => server.reset());

  it("signs both callbacks the Standard Webhooks way: the library verifies them; a changed byte or 6 minutes off fail", async () => {
    const up = server.next("/sign-up");
    await signUp("sia");
    const id = await serviceIdOf("sia");
    server.accept("sia", "n-sia");
    const inn = server.next("/sign-in");
    await post("sign-in", { service_user_id: id, operator_id: OP_A, challenge_token: "n-sia" });
    const now = h.clock.now();
    for (const r of [await up, await inn]) {
      expect(r.headers["webhook-id"]).toMatch(/^msg_[0-9a-f]{32}$/);
      expect(r.headers["webhook-timestamp"]).toBe(String(Math.floor(now.getTime() / 1000)));
      expect(r.headers["webhook-signature"]).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
      expect(verify(r, CALLBACK_SECRET, now)).toEqual(r.body);
      expect(() =>
        verify({ ...r, raw: r.raw.replace('"user_id"', '"user_iD"') }, CALLBACK_SECRET, now),
      ).toThrow(/signature/);
      expect(() => verify(r, CALLBACK_SECRET, new Date(now.getTime() + 6 * 60_000))).toThrow(/timestamp/);
      expect(() => verify(r, CALLBACK_SECRET, new Date(now.getTime() - 6 * 60_000))).toThrow(/timestamp/);
      expect(() => verify(r, newSecret(), now)).toThrow(/signature/);
    }
    // Every callback has an id of its own, so a receiver can refuse one it has seen (a replay).
    const again = server.next("/sign-up");
    await signUp("sia");
    expect((await again).headers["webhook-id"]).not.toBe((await up).headers["webhook-id"]);
  });

  it("signs with both secrets during a rotation, each verifying on its own; the previous one stops with it", async () => {
    const previous = newSecret();
    const current = newSecret();
    await declareExternalUsers(h, {
      operatorId: OP_A,
      base: server.url,
      secret: current,
      previousSecret: previous,
    });
    const during = server.next("/sign-up");
    await signUp("rot");
    const r = await during;
    const now = h.clock.now();
    expect(String(r.headers["webhook-signature"]).split(" ")).toHaveLength(2);
    expect(verify(r, current, now)).toEqual(r.body);
    expect(verify(r, previous, now)).toEqual(r.body);
    expect(() => verify(r, CALLBACK_SECRET, now)).toThrow();

    await declareExternalUsers(h, { operatorId: OP_A, base: server.url, secret: current });
    const after = server.next("/sign-up");
    await signUp("rot");
    const second = await after;
    expect(verify(second, current, now)).toEqual(second.body);
    expect(() => verify(second, previous, now)).toThrow();
  });

  it("reads the secrets from the environment at apply (secret_env, previous_secret_env)", async () => {
    const current = newSecret();
    const previous = newSecret();
    const manifest = SiteManifest.parse({
      version: 1,
      operators: [
        {
          id: OP_A,
          name: "Operator A",
          external_users: {
            sign_up_url: `${server.url}/sign-up`,
            sign_in_url: `${server.url}/sign-in`,
            allow_private_addresses: true,
            secret_env: "VERIFY_SECRET",
            previous_secret_env: "VERIFY_SECRET_OLD",
          },
        },
      ],
    });
    await applyManifest(h.db, manifest, h.clock, { VERIFY_SECRET: current, VERIFY_SECRET_OLD: previous });
    const arrived = server.next("/sign-up");
    await signUp("env");
    const r = await arrived;
    expect(verify(r, current, h.clock.now())).toEqual(r.body);
    expect(verify(r, previous, h.clock.now())).toEqual(r.body);
    await expect(applyManifest(h.db, manifest, h.clock, { VERIFY_SECRET: current })).rejects.toThrow(
      "external_users: previous_secret_env: environment variable VERIFY_SECRET_OLD is not set",
    );
  });

  it("sends nothing for an operator whose callbacks were stored before they were signed: 500 OPERATOR_ERROR", async () => {
    await declareExternalUsers(h, { operatorId: OP_A, base: server.url, riders: [{ user_id: "old-rider" }] });
    const users = userRepository(h.db);
    const callbacks = await users.callbacksOf(OP_A);
    if (!callbacks) throw new Error("operator A has no callbacks");
    await users.updateCallbacks({ ...callbacks, secrets: [] }, h.clock.now().toISOString());
    const before = server.received.length;
    expectSpecError(await signUp("old"), 500, "ERRORS.OPERATOR_ERROR");
    expectSpecError(
      await post("sign-in", {
        service_user_id: manifestRiderId(OP_A, "old-rider"),
        operator_id: OP_A,
        challenge_token: "n",
      }),
      500,
      "ERRORS.OPERATOR_ERROR",
    );
    expect(server.received.length).toBe(before);
    expect(await stored("old")).toEqual({ user: undefined, pending: expect.stringMatching(UUID_RE) });
  });

  it("is refused by an operator server holding another secret: sign-up 400 OPERATOR_REJECTION, sign-in FAILED_TO_SIGN_IN", async () => {
    const strict = await new VerificationServer({ secrets: [newSecret()], now: () => h.clock.now() }).start();
    try {
      await declareExternalUsers(h, {
        operatorId: OP_A,
        base: strict.url,
        riders: [{ user_id: "strict-rider" }],
      });
      strict.accept("strict-rider", "n-strict");
      expectSpecError(await signUp("strict"), 400, "ERRORS.OPERATOR_REJECTION");
      expectSpecError(
        await post("sign-in", {
          service_user_id: manifestRiderId(OP_A, "strict-rider"),
          operator_id: OP_A,
          challenge_token: "n-strict",
        }),
        400,
        "ERRORS.FAILED_TO_SIGN_IN",
      );
      expect(strict.received.map((r) => r.signature)).toEqual(["invalid", "invalid"]);
    } finally {
      await strict.stop();
    }
  });
});
