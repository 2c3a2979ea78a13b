import { createHash } from "node:crypto";
import Fastify, { type LightMyRequestResponse } from "fastify";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { installConsoleGuard } from "../../cloud/http/console-guard.ts";
import { installErrorHandling } from "../../cloud/http/error-handler.ts";
import { createConsoleSessions } from "../../cloud/staff/console-sessions.ts";
import { createStaffService, type StaffService } from "../../cloud/staff/staff-service.ts";
import { staffSessionRepository } from "../../cloud/staff/staff-session-repository.ts";
import type { StaffRole } from "../../shared/domain/staff-roles.ts";
import { type CloudHarness, startCloudHarness } from "../support/cloud-harness.ts";
import { OP_A } from "../support/fixture-site.ts";

const PASSWORD = "correct horse battery";
const MINUTE = 60_000;
const SESSION = "/console/api/session";

let h: CloudHarness;
let staff: StaffService;

async function start(console: Parameters<typeof startCloudHarness>[0] = {}) {
  h = await startCloudHarness(console);
  // The least cost secrets.ts accepts: these tests verify many passwords.
  staff = createStaffService({ db: h.db, clock: h.clock, cost: { ln: 10, r: 8, p: 1 } });
  await addStaff("ann@example.com", "operator");
}

async function addStaff(email: string, role: StaffRole, operatorId: string | null = OP_A) {
  const created = await staff.create({ email, role, operatorId, password: PASSWORD });
  if (typeof created === "string") throw new Error(created);
  return created;
}

const signIn = (email: string, password: string, more: { address?: string; origin?: string } = {}) =>
  h.app.inject({
    method: "POST",
    url: SESSION,
    payload: { email, password },
    remoteAddress: more.address ?? "192.0.2.1",
    headers: more.origin ? { origin: more.origin } : {},
  });

/** The cookie's token from a sign-in's Set-Cookie. */
function tokenOf(res: LightMyRequestResponse): string {
  const cookie = res.cookies.find((c) => c.name === "console_session");
  if (!cookie) throw new Error(`no session cookie: ${res.statusCode} ${res.body}`);
  return cookie.value;
}

const who = (token: string) =>
  h.app.inject({ method: "GET", url: SESSION, cookies: { console_session: token } });

const signOut = (token: string, headers: Record<string, string> = {}) =>
  h.app.inject({ method: "DELETE", url: SESSION, cookies: { console_session: token }, headers });

/** What a refusal says, without the parts that differ per request. */
const refusal = (res: LightMyRequestResponse) => {
  const { correlation_id: _, ...rest } = res.json<Record<string, unknown>>();
  return { status: res.statusCode, body: rest, cookie: res.headers["set-cookie"] };
};

afterEach(() => h.close());

describe("console sign-in", () => {
  beforeEach(() => start());

  it("sets an HttpOnly, SameSite=Strict cookie on /console holding a token the store keeps only hashed", async () => {
    const res = await signIn("ann@example.com", PASSWORD);
    expect(res.statusCode, res.body).toBe(200);
    const cookie = res.cookies.find((c) => c.name === "console_session");
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: "Strict", path: "/console" });
    expect(cookie?.secure).toBeUndefined();
    expect(res.headers["cache-control"]).toBe("no-store");
    const body = res.json();
    expect(body).toEqual({
      email: "ann@example.com",
      role: "operator",
      operator_id: OP_A,
      csrf_token: expect.any(String),
      idle_timeout_s: 1800,
      demo_panel: false,
      map_tiles: null,
    });
    const token = tokenOf(res);
    const hash = createHash("sha256").update(token).digest("hex");
    const stored = await staffSessionRepository(h.db).findUnrevoked(hash);
    expect(stored).toMatchObject({ csrfToken: body.csrf_token, revokedAt: null });
    expect(stored?.tokenHash).not.toBe(token);
  });

  it("matches the email whatever its case", async () => {
    expect((await signIn("ANN@Example.COM", PASSWORD)).statusCode).toBe(200);
  });

  it("tells who is signed in, with the CSRF token; without a session it answers 401 in the error format", async () => {
    const signedIn = await signIn("ann@example.com", PASSWORD);
    const res = await who(tokenOf(signedIn));
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual(signedIn.json());
    for (const token of [undefined, "not-a-session"]) {
      const anon = await h.app.inject({
        method: "GET",
        url: SESSION,
        cookies: token ? { console_session: token } : {},
      });
      expect(anon.statusCode).toBe(401);
      expect(anon.json()).toEqual({
        error_code: "ERRORS.UNAUTHORIZED",
        error_message: "Not signed in to the console",
        status_code: 401,
        correlation_id: expect.any(String),
      });
    }
  });

  it("answers a wrong password, an unknown email and a disabled account with one refusal, and signs nobody in", async () => {
    await addStaff("dan@example.com", "viewer");
    await staff.disable("dan@example.com");
    const wrong = refusal(await signIn("ann@example.com", "not the password"));
    expect(wrong).toEqual({
      status: 401,
      body: { error_code: "ERRORS.UNAUTHORIZED", error_message: "Wrong email or password", status_code: 401 },
      cookie: undefined,
    });
    expect(refusal(await signIn("nobody@example.com", PASSWORD))).toEqual(wrong);
    expect(refusal(await signIn("dan@example.com", PASSWORD))).toEqual(wrong);
    const ann = await staff.list(OP_A);
    for (const s of ann) expect(await staffSessionRepository(h.db).ofStaff(s.id)).toEqual([]);
  });

  it("refuses a sign-in from another site's page (Origin), setting no cookie", async () => {
    const res = await signIn("ann@example.com", PASSWORD, { origin: "https://evil.example" });
    expect(res.statusCode).toBe(403);
    expect(res.json()).toMatchObject({ error_code: "ERRORS.FORBIDDEN" });
    expect(res.headers["set-cookie"]).toBeUndefined();
    expect(await staffSessionRepository(h.db).ofStaff((await staff.list(OP_A))[0]?.id ?? "")).toEqual([]);
    // Its own origin is fine.
    expect((await signIn("ann@example.com", PASSWORD, { origin: "http://localhost:80" })).statusCode).toBe(
      200,
    );
  });
});

describe("console sign-out and CSRF", () => {
  beforeEach(() => start());

  it("refuses a sign-out without the CSRF token, with a wrong one, or from another origin, and the session goes on", async () => {
    const signedIn = await signIn("ann@example.com", PASSWORD);
    const token = tokenOf(signedIn);
    const csrf: string = signedIn.json().csrf_token;
    const attempts: Record<string, string>[] = [
      {},
      { "x-csrf-token": "wrong" },
      { "x-csrf-token": `${csrf}x` },
      { "x-csrf-token": csrf, origin: "https://evil.example" },
      { "x-csrf-token": csrf, origin: "null" },
    ];
    for (const headers of attempts) {
      const res = await signOut(token, headers);
      expect(res.statusCode, JSON.stringify(headers)).toBe(403);
      expect(res.json()).toMatchObject({ error_code: "ERRORS.FORBIDDEN", status_code: 403 });
      expect(res.headers["set-cookie"]).toBeUndefined();
    }
    expect((await who(token)).statusCode).toBe(200);
  });

  it("a refused request does not count as use for the idle timeout", async () => {
    const token = tokenOf(await signIn("ann@example.com", PASSWORD));
    h.clock.advance(20 * MINUTE);
    expect((await signOut(token)).statusCode).toBe(403);
    h.clock.advance(10 * MINUTE);
    expect((await who(token)).statusCode).toBe(401);
  });

  it("signs out with the CSRF token: the cookie is cleared and the session is over for good", async () => {
    const signedIn = await signIn("ann@example.com", PASSWORD);
    const token = tokenOf(signedIn);
    const res = await signOut(token, {
      "x-csrf-token": signedIn.json().csrf_token,
      origin: "http://localhost:80",
    });
    expect(res.statusCode).toBe(204);
    const cleared = res.cookies.find((c) => c.name === "console_session");
    expect(cleared).toMatchObject({ value: "", path: "/console", httpOnly: true, sameSite: "Strict" });
    expect(cleared?.expires?.getTime()).toBeLessThan(Date.now());
    expect((await who(token)).statusCode).toBe(401);
    expect((await signOut(token, { "x-csrf-token": signedIn.json().csrf_token })).statusCode).toBe(401);
  });

  it("ends every session of an account when it is disabled or its password reset", async () => {
    const first = tokenOf(await signIn("ann@example.com", PASSWORD));
    const second = tokenOf(await signIn("ann@example.com", PASSWORD));
    await staff.resetPassword("ann@example.com", "another password!");
    expect((await who(first)).statusCode).toBe(401);
    expect((await who(second)).statusCode).toBe(401);
    expect((await signIn("ann@example.com", PASSWORD)).statusCode).toBe(401);
    const third = tokenOf(await signIn("ann@example.com", "another password!"));
    await staff.disable("ann@example.com");
    expect((await who(third)).statusCode).toBe(401);
  });
});

describe("console idle timeout", () => {
  it("ends a session unused for 30 minutes on the clock; each use starts the time again", async () => {
    await start();
    const token = tokenOf(await signIn("ann@example.com", PASSWORD));
    h.clock.advance(29 * MINUTE);
    expect((await who(token)).statusCode).toBe(200);
    h.clock.advance(29 * MINUTE);
    expect((await who(token)).statusCode).toBe(200);
    h.clock.advance(30 * MINUTE);
    expect((await who(token)).statusCode).toBe(401);
    h.clock.advance(-29 * MINUTE);
    // Once over it stays over, even had the clock gone back.
    expect((await who(token)).statusCode).toBe(401);
  });

  it("takes its length from the options (CONSOLE_IDLE_MINUTES)", async () => {
    await start({ console: { idleTimeoutMs: 5 * MINUTE } });
    const signedIn = await signIn("ann@example.com", PASSWORD);
    expect(signedIn.json().idle_timeout_s).toBe(300);
    h.clock.advance(5 * MINUTE);
    expect((await who(tokenOf(signedIn))).statusCode).toBe(401);
  });
});

describe("console cookie over https", () => {
  it("is Secure when the base URL is https, and the Origin must be the base URL's", async () => {
    await start({ console: { baseUrl: "https://parking.example/" } });
    const foreign = await signIn("ann@example.com", PASSWORD, { origin: "http://localhost:80" });
    expect(foreign.statusCode).toBe(403);
    const res = await signIn("ann@example.com", PASSWORD, { origin: "https://parking.example" });
    expect(res.statusCode).toBe(200);
    expect(res.cookies.find((c) => c.name === "console_session")).toMatchObject({
      secure: true,
      httpOnly: true,
      sameSite: "Strict",
      path: "/console",
    });
  });
});

describe("console sign-in limits", () => {
  it("blocks an account after its failures, from any address, even with the right password; others go on", async () => {
    await start({ console: { signInLimits: { perAccount: { max: 3, windowMs: 10 * MINUTE } } } });
    await addStaff("bob@example.com", "viewer");
    for (let i = 1; i <= 3; i++)
      expect(
        (await signIn("ann@example.com", "wrong password", { address: `192.0.2.${i}` })).statusCode,
      ).toBe(401);
    const blocked = await signIn("ANN@example.com", PASSWORD, { address: "198.51.100.7" });
    expect(blocked.statusCode).toBe(429);
    expect(blocked.json()).toMatchObject({ error_code: "ERRORS.RATE_LIMITED", status_code: 429 });
    expect(Number(blocked.headers["retry-after"])).toBeGreaterThan(0);
    expect(blocked.headers["set-cookie"]).toBeUndefined();
    expect((await signIn("bob@example.com", PASSWORD, { address: "192.0.2.1" })).statusCode).toBe(200);
    h.clock.advance(10 * MINUTE);
    expect((await signIn("ann@example.com", PASSWORD)).statusCode).toBe(200);
  });

  it("blocks an address after its failures, whatever the account; other addresses go on", async () => {
    await start({ console: { signInLimits: { perAddress: { max: 3, windowMs: MINUTE } } } });
    await addStaff("bob@example.com", "viewer");
    for (const email of ["x@example.com", "y@example.com", "ann@example.com"])
      expect((await signIn(email, "wrong password", { address: "203.0.113.9" })).statusCode).toBe(401);
    const blocked = await signIn("bob@example.com", PASSWORD, { address: "203.0.113.9" });
    expect(blocked.statusCode).toBe(429);
    expect(blocked.headers["retry-after"]).toBeDefined();
    expect((await signIn("bob@example.com", PASSWORD, { address: "203.0.113.10" })).statusCode).toBe(200);
    h.clock.advance(MINUTE);
    expect((await signIn("bob@example.com", PASSWORD, { address: "203.0.113.9" })).statusCode).toBe(200);
  });
});

describe("the console guard", () => {
  beforeEach(() => start());

  it("refuses every state-changing /console/api request without the session's CSRF token, before its handler runs", async () => {
    const probe = Fastify();
    installErrorHandling(probe);
    const sessions = createConsoleSessions({ db: h.db, clock: h.clock, staff });
    await installConsoleGuard(probe, { sessions });
    let handled = 0;
    const handler = () => {
      handled++;
      return { ok: true };
    };
    const methods = ["POST", "PUT", "PATCH", "DELETE"] as const;
    for (const method of methods)
      probe.route({ method, url: "/console/api/probe", config: { public: true }, handler });
    probe.get("/console/api/probe", { config: { public: true } }, handler);
    await probe.ready();
    try {
      const signedIn = await signIn("ann@example.com", PASSWORD);
      const cookies = { console_session: tokenOf(signedIn) };
      const csrf: string = signedIn.json().csrf_token;
      for (const method of methods) {
        const anonymous = await probe.inject({
          method,
          url: "/console/api/probe",
          headers: { "x-csrf-token": csrf },
        });
        expect(anonymous.statusCode, method).toBe(401);
        const noToken = await probe.inject({ method, url: "/console/api/probe", cookies });
        expect(noToken.statusCode, method).toBe(403);
        expect(noToken.json()).toMatchObject({ error_code: "ERRORS.FORBIDDEN" });
      }
      expect(handled).toBe(0);
      expect((await probe.inject({ method: "GET", url: "/console/api/probe", cookies })).statusCode).toBe(
        200,
      );
      for (const method of methods) {
        const ok = await probe.inject({
          method,
          url: "/console/api/probe",
          cookies,
          headers: { "x-csrf-token": csrf },
        });
        expect(ok.statusCode, method).toBe(200);
      }
      expect(handled).toBe(5);
    } finally {
      await probe.close();
    }
  });
});
