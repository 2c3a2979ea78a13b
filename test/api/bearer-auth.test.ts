import { Writable } from "node:stream";
import type { InjectOptions, LightMyRequestResponse } from "fastify";
import { SignJWT, UnsecuredJWT } from "jose";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildApp } from "../../cloud/app.ts";
import { DEFAULT_COMMAND_TIMEOUTS } from "../../cloud/devices/timeouts.ts";
import {
  type CloudHarness,
  ISSUER,
  RecordingGateways,
  startCloudHarness,
  TOKEN_SECRET,
} from "../support/cloud-harness.ts";
import { FakeClock } from "../support/fake-clock.ts";
import { CLIENTS, fx, OP_A, OP_B } from "../support/fixture-site.ts";
import { openTestDb } from "../support/test-db.ts";

const LOCATIONS = "/location/v1/locations";
const SOME_UUID = "0b9c6a1e-1111-4222-8333-444455556666";

function expectSpecError(res: LightMyRequestResponse, status: number, errorCode: string) {
  expect(res.statusCode, res.body).toBe(status);
  expect(res.headers["content-type"]).toMatch(/^application\/json/);
  const body = res.json();
  expect(Object.keys(body).sort()).toEqual(["correlation_id", "error_code", "error_message", "status_code"]);
  expect(body.status_code).toBe(status);
  expect(body.error_code).toBe(errorCode);
  expect(typeof body.error_message).toBe("string");
  expect(body.error_message.length).toBeGreaterThan(0);
  expect(typeof body.correlation_id).toBe("string");
  expect(body.correlation_id).toBe(res.headers["x-correlation-id"]);
}

/** RFC 6750 §3.1: a request without credentials gets a bare Bearer challenge, no error parameter. */
function expectMissingToken(res: LightMyRequestResponse) {
  expectSpecError(res, 401, "ERRORS.UNAUTHORIZED");
  const challenge = String(res.headers["www-authenticate"]);
  expect(challenge).toMatch(/^Bearer\b/);
  expect(challenge).not.toMatch(/error=/);
}

function expectInvalidToken(res: LightMyRequestResponse) {
  expectSpecError(res, 401, "ERRORS.INVALID_TOKEN");
  const challenge = String(res.headers["www-authenticate"]);
  expect(challenge).toMatch(/^Bearer\b/);
  expect(challenge).toContain('error="invalid_token"');
}

const withBearer = (
  token: string,
  opts: InjectOptions = { method: "GET", url: LOCATIONS },
): InjectOptions => ({
  ...opts,
  headers: { ...(opts.headers as Record<string, string> | undefined), authorization: `Bearer ${token}` },
});

type Forge = { secret?: Uint8Array; issuer?: string; subject?: string; claims?: Record<string, unknown> };

/** A token shaped like the server's own (HS256, iss, sub, op, perms, kind), with parts swapped for tests. */
function forge(clock: FakeClock, f: Forge = {}): Promise<string> {
  const now = Math.floor(clock.now().getTime() / 1000);
  return new SignJWT({ op: OP_A, perms: [], kind: "client", ...f.claims })
    .setProtectedHeader({ alg: "HS256", typ: "JWT" })
    .setIssuer(f.issuer ?? ISSUER)
    .setSubject(f.subject ?? CLIENTS.basic)
    .setIssuedAt(now)
    .setExpirationTime(now + 3600)
    .sign(f.secret ?? TOKEN_SECRET);
}

describe("bearer authentication", () => {
  let h: CloudHarness;
  beforeAll(async () => {
    h = await startCloudHarness();
  });
  afterAll(() => h.close());

  describe("missing credentials (S9)", () => {
    it("answers a request without Authorization with 401, a bare Bearer challenge and the spec error body", async () => {
      expectMissingToken(await h.app.inject({ method: "GET", url: LOCATIONS }));
    });

    it("answers an empty Authorization header like a missing one", async () => {
      expectMissingToken(
        await h.app.inject({ method: "GET", url: LOCATIONS, headers: { authorization: "" } }),
      );
    });

    const routes: [string, InjectOptions][] = [
      ["GET locations list", { method: "GET", url: LOCATIONS }],
      ["GET location detail", { method: "GET", url: `${LOCATIONS}/${fx.location("L1")}` }],
      [
        "PATCH location",
        { method: "PATCH", url: `${LOCATIONS}/${fx.location("L1")}`, payload: { label: "hijacked" } },
      ],
      ["GET public-areas list", { method: "GET", url: "/location/v1/public-areas" }],
      ["GET device list", { method: "GET", url: `/device/v1/locations/${fx.location("L1")}/devices` }],
      ["GET device detail", { method: "GET", url: `/device/v1/devices/${fx.device("L1", "1")}` }],
      [
        "POST command",
        {
          method: "POST",
          url: `/device/v1/devices/${fx.device("L1", "1")}/commands`,
          payload: { command: "unlock" },
        },
      ],
      ["GET command", { method: "GET", url: `/device/v1/commands/${SOME_UUID}` }],
      ["GET location detail of an unknown id", { method: "GET", url: `${LOCATIONS}/${SOME_UUID}` }],
      ["GET location detail with a malformed id", { method: "GET", url: `${LOCATIONS}/not-a-uuid` }],
    ];

    it.each(routes)(
      "refuses %s without a token with 401 before looking at the request",
      async (_name, opts) => {
        expectMissingToken(await h.app.inject(opts));
      },
    );

    it.each(routes)("refuses %s with a garbage token with 401 invalid_token", async (_name, opts) => {
      expectInvalidToken(await h.app.inject(withBearer("not-a-jwt", opts)));
    });

    it("refuses HEAD on an authenticated GET route without a token", async () => {
      const res = await h.app.inject({ method: "HEAD", url: LOCATIONS });
      expect(res.statusCode).toBe(401);
      expect(String(res.headers["www-authenticate"])).toMatch(/^Bearer\b/);
    });

    it("leaves data untouched and sends nothing to the gateway after refused writes", async () => {
      await h.app.inject({
        method: "PATCH",
        url: `${LOCATIONS}/${fx.location("L1")}`,
        payload: { label: "x" },
      });
      await h.app.inject({
        method: "POST",
        url: `/device/v1/devices/${fx.device("L1", "1")}/commands`,
        payload: { command: "unlock" },
      });
      const detail = await h.call(CLIENTS.admin, { method: "GET", url: `${LOCATIONS}/${fx.location("L1")}` });
      expect(detail.statusCode).toBe(200);
      expect(detail.json().label).toBe("Lockers one");
      expect(h.gateways.commands).toEqual([]);
    });
  });

  describe("invalid tokens (S10)", () => {
    it("accepts a token forged with the server's secret and issuer (control for the cases below)", async () => {
      const res = await h.app.inject(withBearer(await forge(h.clock)));
      expect(res.statusCode, res.body).toBe(200);
    });

    it("refuses a token whose signature was altered", async () => {
      const [head, payload, sig] = (await h.token(CLIENTS.basic)).split(".") as [string, string, string];
      const mid = Math.floor(sig.length / 2);
      const flipped = `${sig.slice(0, mid)}${sig[mid] === "A" ? "B" : "A"}${sig.slice(mid + 1)}`;
      expectInvalidToken(await h.app.inject(withBearer(`${head}.${payload}.${flipped}`)));
    });

    it("refuses a token whose payload was altered to another operator, keeping the original signature", async () => {
      const [head, payload, sig] = (await h.token(CLIENTS.basic)).split(".") as [string, string, string];
      const claims = JSON.parse(Buffer.from(payload, "base64url").toString());
      const escalated = Buffer.from(JSON.stringify({ ...claims, op: OP_B })).toString("base64url");
      expectInvalidToken(await h.app.inject(withBearer(`${head}.${escalated}.${sig}`)));
    });

    it("refuses an unsigned alg:none token", async () => {
      const now = Math.floor(h.clock.now().getTime() / 1000);
      const token = new UnsecuredJWT({ op: OP_A, perms: [], kind: "client" })
        .setIssuer(ISSUER)
        .setSubject(CLIENTS.admin)
        .setIssuedAt(now)
        .setExpirationTime(now + 3600)
        .encode();
      expect(token.endsWith(".")).toBe(true);
      expectInvalidToken(await h.app.inject(withBearer(token)));
    });

    it("refuses an alg:none header put on a real token's payload with its signature stripped", async () => {
      const [, payload] = (await h.token(CLIENTS.admin)).split(".") as [string, string];
      const none = Buffer.from(JSON.stringify({ alg: "none", typ: "JWT" })).toString("base64url");
      expectInvalidToken(await h.app.inject(withBearer(`${none}.${payload}.`)));
    });

    it("refuses a token from another issuer", async () => {
      expectInvalidToken(
        await h.app.inject(withBearer(await forge(h.clock, { issuer: "http://evil.test" }))),
      );
    });

    it("refuses a token signed with another secret", async () => {
      const secret = new TextEncoder().encode("another-secret-that-is-at-least-32-bytes");
      expectInvalidToken(await h.app.inject(withBearer(await forge(h.clock, { secret }))));
    });

    it("refuses a correctly signed token whose claims are not a client's", async () => {
      expectInvalidToken(
        await h.app.inject(withBearer(await forge(h.clock, { claims: { kind: "user", op: undefined } }))),
      );
    });

    it("refuses a non-Bearer Authorization scheme with 401 invalid_token", async () => {
      const basic = `Basic ${Buffer.from(`${CLIENTS.admin}:secret`).toString("base64")}`;
      const res = await h.app.inject({ method: "GET", url: LOCATIONS, headers: { authorization: basic } });
      expectInvalidToken(res);
    });

    it("does not echo the presented token in the error response", async () => {
      const token = await forge(h.clock, { issuer: "http://evil.test" });
      const res = await h.app.inject(withBearer(token));
      expect(res.statusCode).toBe(401);
      expect(res.body).not.toContain(token);
      expect(String(res.headers["www-authenticate"])).not.toContain(token);
    });
  });

  describe("token in the query string (S11)", () => {
    it("refuses ?access_token= with 401 even when the token is valid", async () => {
      const token = await h.token(CLIENTS.admin);
      const res = await h.app.inject({ method: "GET", url: `${LOCATIONS}?access_token=${token}` });
      expectMissingToken(res);
      expect(res.body).not.toContain(token);
    });

    it("refuses ?access_token= on a detail route with 401", async () => {
      const token = await h.token(CLIENTS.admin);
      const res = await h.app.inject({
        method: "GET",
        url: `${LOCATIONS}/${fx.location("L1")}?include=resources&access_token=${token}`,
      });
      expectMissingToken(res);
    });
  });

  describe("public routes", () => {
    it("serves the public-area GeoJSON without a token", async () => {
      const res = await h.app.inject({ method: "GET", url: "/location/v1/public-areas/city-a/locations" });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.headers["content-type"]).toMatch(/^application\/geo\+json/);
      const body = res.json();
      expect(body.type).toBe("FeatureCollection");
      expect(body.features).toHaveLength(2);
    });

    it("answers an unknown public area with 404 and the spec error body, without a token", async () => {
      expectSpecError(
        await h.app.inject({ method: "GET", url: "/location/v1/public-areas/no-such-area/locations" }),
        404,
        "ERRORS.NOT_FOUND",
      );
    });

    it("ignores a broken token on the public-area route", async () => {
      const res = await h.app.inject(
        withBearer("not-a-jwt", { method: "GET", url: "/location/v1/public-areas/city-a/locations" }),
      );
      expect(res.statusCode, res.body).toBe(200);
    });

    it("answers /healthz without a token", async () => {
      const res = await h.app.inject({ method: "GET", url: "/healthz" });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ status: "ready" });
    });
  });
});

describe("bearer token expiry (S10)", () => {
  let h: CloudHarness;
  beforeAll(async () => {
    h = await startCloudHarness();
  });
  afterAll(() => h.close());

  it("accepts an issued token until its hour is up and refuses it 3601 s after issue", async () => {
    const token = await h.token(CLIENTS.basic);
    expect((await h.app.inject(withBearer(token))).statusCode).toBe(200);

    h.clock.advance(3599_000);
    expect((await h.app.inject(withBearer(token))).statusCode).toBe(200);

    h.clock.advance(2_000);
    const res = await h.app.inject(withBearer(token));
    expectInvalidToken(res);
    expect(String(res.headers["www-authenticate"])).toContain("expired");
  });
});

describe("access log with a token in the query string (S11)", () => {
  /**
   * Fastify logs a request before any onRequest hook runs, so the URL is redacted in `rewriteUrl`
   * (cloud/app.ts), which runs before routing and logging: no line of the log holds the token.
   */
  it("never writes the query-string token to the access log", async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _enc, cb) {
        lines.push(String(chunk));
        cb();
      },
    });
    const store = await openTestDb();
    const app = await buildApp({
      db: store.db,
      clock: new FakeClock(),
      log: pino({ level: "info" }, sink),
      gateways: new RecordingGateways(),
      tokenSecret: TOKEN_SECRET,
      issuer: ISSUER,
      timeouts: DEFAULT_COMMAND_TIMEOUTS,
    });
    try {
      await app.ready();
      const token = await forge(new FakeClock());
      const res = await app.inject({ method: "GET", url: `${LOCATIONS}?access_token=${token}` });
      expect(res.statusCode).toBe(401);
      expect(lines.length).toBeGreaterThan(0);
      expect(lines.join("\n")).not.toContain(token);
    } finally {
      await app.close();
      await store.drop();
    }
  });
});
