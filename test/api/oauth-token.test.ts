import type { InjectOptions, LightMyRequestResponse } from "fastify";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { applyManifest } from "../../cloud/manifest/apply-manifest.ts";
import { SiteManifest } from "../../cloud/manifest/manifest-schema.ts";
import { type CloudHarness, fixtureSecretHash, startCloudHarness } from "../support/cloud-harness.ts";
import { CLIENTS, OP_A, SECRET } from "../support/fixture-site.ts";

const FORM_TYPE = "application/x-www-form-urlencoded";

type TokenRequest = {
  form?: string | Record<string, string>;
  authorization?: string;
  contentType?: string;
  query?: string;
  remoteAddress?: string;
};

function postToken(h: CloudHarness, req: TokenRequest): Promise<LightMyRequestResponse> {
  const headers: Record<string, string> = { "content-type": req.contentType ?? FORM_TYPE };
  if (req.authorization) headers.authorization = req.authorization;
  const form = req.form ?? {};
  const opts: InjectOptions = {
    method: "POST",
    url: `/oauth2/token${req.query ? `?${req.query}` : ""}`,
    headers,
    payload: typeof form === "string" ? form : new URLSearchParams(form).toString(),
  };
  if (req.remoteAddress) opts.remoteAddress = req.remoteAddress;
  return h.app.inject(opts);
}

const grant = (clientId: string, secret: string) => ({
  grant_type: "client_credentials",
  client_id: clientId,
  client_secret: secret,
});

const basic = (user: string, pass: string) => `Basic ${Buffer.from(`${user}:${pass}`).toString("base64")}`;

/** RFC 6749 §2.3.1: each part is application/x-www-form-urlencoded before base64. */
const basicEncoded = (id: string, secret: string) =>
  basic(encodeURIComponent(id).replace(/%20/g, "+"), encodeURIComponent(secret).replace(/%20/g, "+"));

/** An RFC 6749 §5.2 error that also carries the spec's standard error fields, and never a token. */
function expectOAuthError(res: LightMyRequestResponse, status: number, error: string, errorCode: string) {
  expect(res.statusCode, res.body).toBe(status);
  expect(res.headers["content-type"]).toMatch(/^application\/json/);
  expect(res.headers["cache-control"]).toBe("no-store");
  const body = res.json();
  expect(body).toMatchObject({
    error,
    status_code: status,
    error_code: errorCode,
    correlation_id: res.headers["x-correlation-id"],
  });
  expect(typeof body.error_message).toBe("string");
  expect(body.error_message.length).toBeGreaterThan(0);
  expect(typeof body.correlation_id).toBe("string");
  expect(body).not.toHaveProperty("access_token");
  expect(res.body).not.toContain("eyJ"); // no JWT anywhere in the response
}

describe("POST /oauth2/token", () => {
  let h: CloudHarness;
  beforeAll(async () => {
    h = await startCloudHarness();
  });
  afterAll(() => h.close());

  describe("client authentication (S1, S2)", () => {
    it("refuses a wrong secret in the Basic header with 401 invalid_client, a Basic challenge and no-store", async () => {
      const res = await postToken(h, {
        authorization: basic(CLIENTS.admin, "wrong-secret"),
        form: { grant_type: "client_credentials" },
      });
      expectOAuthError(res, 401, "invalid_client", "ERRORS.INVALID_CLIENT");
      expect(res.headers["www-authenticate"]).toMatch(/^Basic /);
      expect(res.headers.pragma).toBe("no-cache");
    });

    it("refuses a wrong secret in the form body with 401 invalid_client", async () => {
      const res = await postToken(h, { form: grant(CLIENTS.admin, "wrong-secret") });
      expectOAuthError(res, 401, "invalid_client", "ERRORS.INVALID_CLIENT");
      expect(res.headers["www-authenticate"]).toMatch(/^Basic /);
    });

    it("answers an unknown client id exactly like a wrong secret, so ids cannot be enumerated", async () => {
      const wrongSecret = await postToken(h, { form: grant(CLIENTS.admin, "wrong-secret") });
      const unknownId = await postToken(h, { form: grant("no-such-client", SECRET) });
      expectOAuthError(unknownId, 401, "invalid_client", "ERRORS.INVALID_CLIENT");
      const strip = (r: LightMyRequestResponse) => ({ ...r.json(), correlation_id: undefined });
      expect(strip(unknownId)).toEqual(strip(wrongSecret));
      expect(unknownId.headers["www-authenticate"]).toBe(wrongSecret.headers["www-authenticate"]);
    });

    it("refuses a request without any client credentials with 401 invalid_client", async () => {
      const res = await postToken(h, { form: { grant_type: "client_credentials" } });
      expectOAuthError(res, 401, "invalid_client", "ERRORS.INVALID_CLIENT");
    });

    it("refuses a body with a client id but an empty secret with 401 invalid_client", async () => {
      const res = await postToken(h, { form: grant(CLIENTS.admin, "") });
      expectOAuthError(res, 401, "invalid_client", "ERRORS.INVALID_CLIENT");
    });
  });

  describe("malformed requests (S3)", () => {
    it("answers 400 invalid_request when grant_type is missing", async () => {
      const res = await postToken(h, { form: { client_id: CLIENTS.admin, client_secret: SECRET } });
      expectOAuthError(res, 400, "invalid_request", "ERRORS.INVALID_REQUEST");
      expect(res.json().error_message).toContain("grant_type");
    });

    it("answers 400 invalid_request when client_id is sent twice", async () => {
      const form = new URLSearchParams([
        ["grant_type", "client_credentials"],
        ["client_id", CLIENTS.admin],
        ["client_id", CLIENTS.basic],
        ["client_secret", SECRET],
      ]).toString();
      const res = await postToken(h, { form });
      expectOAuthError(res, 400, "invalid_request", "ERRORS.INVALID_REQUEST");
      expect(res.json().error_message).toContain("client_id");
    });

    it("answers 400 invalid_request when grant_type is sent twice", async () => {
      const form = `grant_type=client_credentials&grant_type=client_credentials&client_id=${CLIENTS.admin}&client_secret=${SECRET}`;
      const res = await postToken(h, { form });
      expectOAuthError(res, 400, "invalid_request", "ERRORS.INVALID_REQUEST");
    });

    it("answers 400 invalid_request when credentials come both in the Basic header and in the body", async () => {
      const res = await postToken(h, {
        authorization: basic(CLIENTS.admin, SECRET),
        form: grant(CLIENTS.admin, SECRET),
      });
      expectOAuthError(res, 400, "invalid_request", "ERRORS.INVALID_REQUEST");
    });

    it("answers 400 invalid_request when the Basic header is joined by a body client_id only", async () => {
      const res = await postToken(h, {
        authorization: basic(CLIENTS.admin, SECRET),
        form: { grant_type: "client_credentials", client_id: CLIENTS.admin },
      });
      expectOAuthError(res, 400, "invalid_request", "ERRORS.INVALID_REQUEST");
    });
  });

  describe("grant types (S4)", () => {
    it.each([
      ["password", { username: "someone", password: "pw" }],
      ["authorization_code", { code: "abc", redirect_uri: "https://example.test/cb" }],
      ["refresh_token", { refresh_token: "some-refresh-token" }],
      ["urn:ietf:params:oauth:grant-type:jwt-bearer", { assertion: "x.y.z" }],
    ])(
      "answers 400 unsupported_grant_type for grant_type=%s even with valid client credentials",
      async (grantType, extra) => {
        const res = await postToken(h, {
          form: { ...grant(CLIENTS.admin, SECRET), ...extra, grant_type: grantType },
        });
        expectOAuthError(res, 400, "unsupported_grant_type", "ERRORS.UNSUPPORTED_GRANT_TYPE");
      },
    );
  });

  describe("transport rules (S5)", () => {
    it("answers GET with 405, an Allow: POST header and the spec error body, and issues no token", async () => {
      const res = await h.app.inject({
        method: "GET",
        url: `/oauth2/token?${new URLSearchParams(grant(CLIENTS.admin, SECRET))}`,
      });
      expect(res.statusCode).toBe(405);
      expect(res.headers.allow).toBe("POST");
      const body = res.json();
      expect(Object.keys(body).sort()).toEqual([
        "correlation_id",
        "error_code",
        "error_message",
        "status_code",
      ]);
      expect(body).toMatchObject({
        status_code: 405,
        error_code: "ERRORS.METHOD_NOT_ALLOWED",
        correlation_id: res.headers["x-correlation-id"],
      });
      expect(res.body).not.toContain("eyJ");
    });

    it("answers a JSON body with 400 invalid_request and issues no token", async () => {
      const res = await postToken(h, {
        contentType: "application/json",
        form: JSON.stringify(grant(CLIENTS.admin, SECRET)),
      });
      expectOAuthError(res, 400, "invalid_request", "ERRORS.INVALID_REQUEST");
    });

    it("answers a JSON body with valid Basic credentials with 400 invalid_request", async () => {
      const res = await postToken(h, {
        contentType: "application/json",
        authorization: basic(CLIENTS.admin, SECRET),
        form: JSON.stringify({ grant_type: "client_credentials" }),
      });
      expectOAuthError(res, 400, "invalid_request", "ERRORS.INVALID_REQUEST");
    });

    it("answers credentials in the query string with 400 invalid_request and issues no token", async () => {
      const res = await postToken(h, {
        query: new URLSearchParams(grant(CLIENTS.admin, SECRET)).toString(),
        form: "",
      });
      expectOAuthError(res, 400, "invalid_request", "ERRORS.INVALID_REQUEST");
    });

    it("answers a secret in the query string with 400 even when the body is otherwise complete", async () => {
      const res = await postToken(h, {
        query: `client_secret=${SECRET}`,
        form: grant(CLIENTS.admin, SECRET),
      });
      expectOAuthError(res, 400, "invalid_request", "ERRORS.INVALID_REQUEST");
    });

    it.each(["", ";", "application/json, text/plain"])(
      "answers a Content-Type no parser can read (%j) with 400 invalid_request, not 415",
      async (contentType) => {
        const res = await postToken(h, { contentType, form: grant(CLIENTS.admin, SECRET) });
        expectOAuthError(res, 400, "invalid_request", "ERRORS.INVALID_REQUEST");
      },
    );

    it("answers a client id holding U+0000 like an unknown one (401), in the form or the Basic header", async () => {
      const inForm = await postToken(h, { form: grant("a-admin\u0000", SECRET) });
      expectOAuthError(inForm, 401, "invalid_client", "ERRORS.INVALID_CLIENT");
      const inBasic = await postToken(h, {
        authorization: basicEncoded("\u0000", SECRET),
        form: { grant_type: "client_credentials" },
      });
      expectOAuthError(inBasic, 401, "invalid_client", "ERRORS.INVALID_CLIENT");
    });
  });

  describe("in the OpenAPI document", () => {
    it("is described as a form (grant_type, client_id, client_secret) that needs no bearer token", async () => {
      const doc = (await h.app.inject({ method: "GET", url: "/openapi.json" })).json();
      const op = doc.paths["/oauth2/token"].post;
      expect(op.security).toEqual([]);
      const ref: string = op.requestBody.content[FORM_TYPE].schema.$ref;
      const schema = doc.components.schemas[ref.replace("#/components/schemas/", "")];
      expect(Object.keys(schema.properties).sort()).toEqual(["client_id", "client_secret", "grant_type"]);
      expect(schema.properties.grant_type.const).toBe("client_credentials");
    });
  });

  describe("client ids with reserved characters (S6)", () => {
    const COLON_ID = "ops:fleet-1";
    const PERCENT_ID = "pct%41-fleet";
    beforeAll(async () => {
      const secretHash = await fixtureSecretHash();
      const clients = [COLON_ID, PERCENT_ID].map((client_id) => ({
        client_id,
        name: client_id,
        permissions: [],
        secret_hash: secretHash,
      }));
      const manifest = { version: 1, operators: [{ id: OP_A, name: "Operator A", clients }] };
      await applyManifest(h.db, SiteManifest.parse(manifest), h.clock);
    });

    it.each([COLON_ID, PERCENT_ID])(
      "authenticates %s when it is urlencoded before base64 (RFC 6749 §2.3.1)",
      async (id) => {
        const res = await postToken(h, {
          authorization: basicEncoded(id, SECRET),
          form: { grant_type: "client_credentials" },
        });
        expect(res.statusCode, res.body).toBe(200);
        const token = res.json().access_token as string;
        const payload = JSON.parse(Buffer.from(token.split(".")[1] ?? "", "base64url").toString()) as {
          sub: string;
        };
        expect(payload.sub).toBe(id);
      },
    );

    it.each([COLON_ID, PERCENT_ID])(
      "rejects %s sent raw (not urlencoded) in the Basic header with 401 invalid_client",
      async (id) => {
        const res = await postToken(h, {
          authorization: basic(id, SECRET),
          form: { grant_type: "client_credentials" },
        });
        expectOAuthError(res, 401, "invalid_client", "ERRORS.INVALID_CLIENT");
      },
    );

    it("authenticates a client id with ':' and '%' sent in the form body", async () => {
      for (const id of [COLON_ID, PERCENT_ID]) {
        const res = await postToken(h, { form: grant(id, SECRET) });
        expect(res.statusCode, res.body).toBe(200);
      }
    });
  });

  describe("successful issue (S7)", () => {
    it("issues a Bearer token valid 3600 s with no refresh token and Cache-Control no-store", async () => {
      const res = await postToken(h, { form: grant(CLIENTS.admin, SECRET) });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.headers["cache-control"]).toBe("no-store");
      expect(res.headers.pragma).toBe("no-cache");
      const body = res.json();
      expect(Object.keys(body).sort()).toEqual(["access_token", "expires_in", "token_type"]);
      expect(body.token_type).toBe("Bearer");
      expect(body.expires_in).toBe(3600);
      expect(body).not.toHaveProperty("refresh_token");
      expect(body.access_token).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
    });

    it("issues a token through the Basic header that works on GET /location/v1/locations", async () => {
      const res = await postToken(h, {
        authorization: basic(CLIENTS.basic, SECRET),
        form: { grant_type: "client_credentials" },
      });
      expect(res.statusCode, res.body).toBe(200);
      const list = await h.app.inject({
        method: "GET",
        url: "/location/v1/locations",
        headers: { authorization: `Bearer ${res.json().access_token}` },
      });
      expect(list.statusCode, list.body).toBe(200);
      expect(list.json().data.map((l: { code: string }) => l.code)).toEqual(["D1", "H1", "L1"]);
    });

    it("accepts a form content type with a charset parameter", async () => {
      const res = await postToken(h, {
        contentType: `${FORM_TYPE}; charset=UTF-8`,
        form: grant(CLIENTS.admin, SECRET),
      });
      expect(res.statusCode, res.body).toBe(200);
    });
  });
});

describe("POST /oauth2/token failed-attempt limiter (S8)", () => {
  let h: CloudHarness;
  beforeEach(async () => {
    h = await startCloudHarness();
  });
  afterEach(() => h.close());

  async function failTimes(n: number, clientId: string, ip: (i: number) => string) {
    for (let i = 0; i < n; i++) {
      const res = await postToken(h, { form: grant(clientId, `wrong-${i}`), remoteAddress: ip(i) });
      expect(res.statusCode, `attempt ${i + 1}`).toBe(401);
    }
  }

  function expectThrottled(res: LightMyRequestResponse, retryAfterS: number) {
    expect(res.statusCode, res.body).toBe(429);
    expect(res.headers["retry-after"]).toBe(String(retryAfterS));
    expect(res.headers["cache-control"]).toBe("no-store");
    const body = res.json();
    expect(body).toMatchObject({
      status_code: 429,
      error_code: "ERRORS.RATE_LIMITED",
      correlation_id: res.headers["x-correlation-id"],
    });
    expect(body.error_message.length).toBeGreaterThan(0);
    expect(body).not.toHaveProperty("access_token");
  }

  it("throttles an address after 20 bad secrets with 429 and Retry-After, and lifts after the window", async () => {
    const attacker = "10.0.0.1";
    await failTimes(19, CLIENTS.basic, () => attacker);
    // 19 failures are under the limit, and a success is not counted as a failure.
    const under = await postToken(h, { form: grant(CLIENTS.tagger, SECRET), remoteAddress: attacker });
    expect(under.statusCode, under.body).toBe(200);
    await failTimes(1, CLIENTS.basic, () => attacker);

    // The 21st attempt from that address is refused before the secret is checked, even a correct one.
    expectThrottled(await postToken(h, { form: grant(CLIENTS.basic, SECRET), remoteAddress: attacker }), 60);
    expectThrottled(await postToken(h, { form: grant(CLIENTS.tagger, SECRET), remoteAddress: attacker }), 60);

    // Retry-After counts down with the clock.
    h.clock.advance(30_000);
    expectThrottled(await postToken(h, { form: grant(CLIENTS.tagger, SECRET), remoteAddress: attacker }), 30);

    // Once the window has passed, attempts are allowed again.
    h.clock.advance(31_000);
    const again = await postToken(h, { form: grant(CLIENTS.basic, SECRET), remoteAddress: attacker });
    expect(again.statusCode, again.body).toBe(200);
  });

  it("does not let bad secrets from one address lock the same client out of another address", async () => {
    await failTimes(20, CLIENTS.basic, () => "10.0.0.1");
    expectThrottled(
      await postToken(h, { form: grant(CLIENTS.basic, SECRET), remoteAddress: "10.0.0.1" }),
      60,
    );

    const legitimate = await postToken(h, { form: grant(CLIENTS.basic, SECRET), remoteAddress: "10.0.0.2" });
    expect(legitimate.statusCode, legitimate.body).toBe(200);
    const viaBasic = await postToken(h, {
      authorization: basic(CLIENTS.basic, SECRET),
      form: { grant_type: "client_credentials" },
      remoteAddress: "10.0.0.3",
    });
    expect(viaBasic.statusCode, viaBasic.body).toBe(200);
  });

  it("blocks a client id only after 100 failures a minute from several addresses, then backs off exponentially up to 15 min", async () => {
    // Four addresses at their own limit (80 failures), then 19 more from a fifth: still under 100.
    await Promise.all([1, 2, 3, 4].map((n) => failTimes(20, CLIENTS.basic, () => `10.1.0.${n}`)));
    await failTimes(19, CLIENTS.basic, () => "10.1.0.5");
    const under = await postToken(h, { form: grant(CLIENTS.basic, SECRET), remoteAddress: "10.2.0.1" });
    expect(under.statusCode, under.body).toBe(200);

    // The 100th failure blocks the client id from every address for 1 s.
    await failTimes(1, CLIENTS.basic, () => "10.1.0.5");
    expectThrottled(await postToken(h, { form: grant(CLIENTS.basic, SECRET), remoteAddress: "10.2.0.1" }), 1);
    expectThrottled(
      await postToken(h, {
        authorization: basic(CLIENTS.basic, SECRET),
        form: { grant_type: "client_credentials" },
        remoteAddress: "10.2.0.2",
      }),
      1,
    );
    // Other clients are unaffected.
    const other = await postToken(h, { form: grant(CLIENTS.admin, SECRET), remoteAddress: "10.2.0.1" });
    expect(other.statusCode, other.body).toBe(200);

    // Each failure after a block lapses doubles the next block, up to 15 minutes.
    const waits = [1];
    for (let i = 0; i < 11; i++) {
      h.clock.advance((waits.at(-1) ?? 0) * 1000);
      await failTimes(1, CLIENTS.basic, () => "10.3.0.1");
      const res = await postToken(h, { form: grant(CLIENTS.basic, SECRET), remoteAddress: "10.2.0.1" });
      expectThrottled(res, Number(res.headers["retry-after"]));
      waits.push(Number(res.headers["retry-after"]));
    }
    expect(waits).toEqual([1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 900, 900]);

    // Once the block has lapsed the right secret works again.
    h.clock.advance(900_000);
    const after = await postToken(h, { form: grant(CLIENTS.basic, SECRET), remoteAddress: "10.2.0.1" });
    expect(after.statusCode, after.body).toBe(200);

    // After an hour without failures the backoff is forgotten: one wrong secret no longer blocks.
    h.clock.advance(3_600_000);
    await failTimes(1, CLIENTS.basic, () => "10.3.0.1");
    const forgiven = await postToken(h, { form: grant(CLIENTS.basic, SECRET), remoteAddress: "10.2.0.1" });
    expect(forgiven.statusCode, forgiven.body).toBe(200);
  });
});
