import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync, statSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadManifest } from "../../cloud/manifest/load-manifest.ts";
import { signUpRepository } from "../../cloud/users/sign-up-repository.ts";
import { userRepository } from "../../cloud/users/user-repository.ts";
import { newMessageId } from "../../cloud/webhooks/webhook-payload.ts";
import { signWebhook } from "../../cloud/webhooks/webhook-signature.ts";
import {
  DEMO_MANIFEST,
  DemoConfigError,
  demoBanner,
  demoSettings,
  type RunningDemo,
  startDemo,
} from "../../demo/demo.ts";
import {
  demoVerificationSecret,
  riderBannerLines,
  startDemoVerification,
  VERIFICATION_SECRET_FILE,
} from "../../demo/demo-riders.ts";

const run = promisify(execFile);
const ALL_GATEWAYS = "gw-cs-lockers,gw-ms-docks,gw-hb-house,gw-pk-house";
const ENV = { DEMO_CLIENT_SECRET: "x".repeat(12), DEMO_GATEWAY_SECRET: "y".repeat(12) };
const newSecret = () => `whsec_${randomBytes(32).toString("base64")}`;
const ANN = "7d4a52e0-3c1b-4f6e-8a90-1b2c3d4e5f01";

/** Runs a line the banner prints, as a reader would paste it into a shell. */
async function shell(line: string, env: Record<string, string> = {}): Promise<string> {
  const { stdout } = await run("sh", ["-c", line], { env: { ...process.env, ...env } });
  return stdout;
}

describe("the demo's riders (npm start)", () => {
  let dir: string;
  let demo: RunningDemo;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "demo-riders-"));
    demo = await startDemo({
      env: { PORT: "0", MQTT_PORT: "0", DATA_DIR: dir, DEMO_SKIP_GATEWAYS: ALL_GATEWAYS },
      log: pino({ level: process.env.TEST_LOG_LEVEL ?? "silent" }),
    });
  });
  afterAll(async () => {
    await demo?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it("signs a rider up and in with the banner's own curl lines, and the token reads the locations", async () => {
    const banner = demoBanner(demo).split("\n");
    const curl = (after: string) => {
      const i = banner.findIndex((l) => l.includes(after));
      expect(i, `banner line after "${after}"`).toBeGreaterThanOrEqual(0);
      return (banner[i + 1] ?? "").trim();
    };
    expect(banner.join("\n")).toContain("Riders (external users): rider-ann, rider-bob");
    expect(await shell(`${curl("Sign a rider up:")} -w '%{http_code}'`)).toBe("204");
    expect(JSON.parse(await shell(curl("registers a one-time challenge")))).toEqual({
      challenge_token: "nonce-1",
      expires_in: 60,
    });
    const signedIn = JSON.parse(await shell(curl("Sign in (answers"))) as Record<string, string>;
    expect(Object.keys(signedIn).sort()).toEqual(["access_token", "refresh_token"]);

    const res = await fetch(`${demo.cloud.baseUrl}/location/v1/locations`, {
      headers: { authorization: `Bearer ${signedIn.access_token}` },
    });
    expect(res.status).toBe(200);
    // The challenge was used up: the same sign-in again is refused by the operator's server.
    expect(JSON.parse(await shell(curl("Sign in (answers")))).toMatchObject({
      error_code: "ERRORS.FAILED_TO_SIGN_IN",
    });
  });

  /** POSTs to the demo's verification server, signed as the service signs its callbacks unless told. */
  const post = (
    path: string,
    body: unknown,
    o: { secret?: string | null; at?: Date; headers?: Record<string, string> } = {},
  ) => {
    const raw = JSON.stringify(body);
    const secret = o.secret === undefined ? demo.verification.secret : o.secret;
    const signature = secret
      ? signWebhook({ id: newMessageId(), at: o.at ?? new Date(), body: raw, secrets: [secret] })
      : {};
    return fetch(`${demo.verification.url}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", ...signature, ...o.headers },
      body: raw,
    });
  };

  it("tells the rider's phone number at sign-in, as the manifest declares it", async () => {
    expect(demo.verification.server).not.toBeNull();
    const minted = (await (await post("/challenges", { user_id: "rider-ann" })).json()) as {
      challenge_token: string;
    };
    const answer = await post("/sign-in", { user_id: "rider-ann", challenge_token: minted.challenge_token });
    expect(await answer.json()).toEqual({ service_user_id: ANN, phone_number: "+31612345678" });
    expect(
      (await post("/sign-in", { user_id: "rider-bob", challenge_token: "never-registered" })).status,
    ).toBe(401);
  });

  it("refuses callbacks not signed by the service: unsigned, another secret, a changed byte, 6 minutes old, replayed", async () => {
    const challenge = async () => {
      const res = await post("/challenges", { user_id: "rider-ann" });
      return ((await res.json()) as { challenge_token: string }).challenge_token;
    };
    const signIn = async (o: Parameters<typeof post>[2]) =>
      post("/sign-in", { user_id: "rider-ann", challenge_token: await challenge() }, o);
    expect((await signIn({ secret: null })).status).toBe(401);
    expect((await signIn({ secret: newSecret() })).status).toBe(401);
    expect((await signIn({ at: new Date(Date.now() - 6 * 60_000) })).status).toBe(401);
    const token = await challenge();
    const body = JSON.stringify({ user_id: "rider-ann", challenge_token: token });
    const headers = signWebhook({
      id: newMessageId(),
      at: new Date(),
      body,
      secrets: [demo.verification.secret],
    });
    const send = (raw: string) =>
      fetch(`${demo.verification.url}/sign-in`, {
        method: "POST",
        headers: { "content-type": "application/json", ...headers },
        body: raw,
      });
    expect((await send(body.replace("rider-ann", "rider-bob"))).status).toBe(401);
    expect((await send(body)).status).toBe(200);
    // The same message again (a replay): refused, though its signature and timestamp are good.
    expect((await send(body)).status).toBe(401);
    // Signed sign-ups go through for the app's users only.
    expect(
      (await post("/sign-up", { user_id: "rider-bob", service_user_id: ANN }, { secret: null })).status,
    ).toBe(401);
  });

  it("keeps nothing of a flood of sign-ups with invented ids, and rider-ann still signs in", async () => {
    const base = `${demo.cloud.baseUrl}/external-users-auth/v1`;
    const json = (body: unknown) => ({
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    const statuses = new Set<number>();
    for (let i = 0; i < 61; i++) {
      const res = await fetch(
        `${base}/sign-up`,
        json({ user_id: `invented-${i}`, operator_id: demo.verification.operatorId }),
      );
      statuses.add(res.status);
      const body = (await res.json()) as { error_code: string };
      expect(body.error_code).toBe(res.status === 429 ? "ERRORS.RATE_LIMITED" : "ERRORS.OPERATOR_REJECTION");
      if (res.status === 429) expect(Number(res.headers.get("retry-after"))).toBeGreaterThan(0);
    }
    // The demo operator's server knows no invented user: each was rejected, until the address's budget ran out.
    expect([...statuses].sort()).toEqual([400, 429]);
    const users = userRepository(demo.cloud.db);
    const signUps = signUpRepository(demo.cloud.db);
    for (let i = 0; i < 61; i++) {
      const id = `invented-${i}`;
      expect(await users.findByUserId(demo.verification.operatorId, id)).toBeUndefined();
      expect(await signUps.findByUserId(demo.verification.operatorId, id, new Date())).toBeUndefined();
    }

    await post("/challenges", { user_id: "rider-ann", challenge_token: "after-the-flood" });
    const signedIn = await fetch(
      `${base}/sign-in`,
      json({
        service_user_id: ANN,
        operator_id: demo.verification.operatorId,
        challenge_token: "after-the-flood",
      }),
    );
    expect(signedIn.status, await signedIn.clone().text()).toBe(200);
  });
});

describe("DEMO_VERIFICATION_URL", () => {
  it("points the demo operator's callbacks at <url>/sign-up and <url>/sign-in, loopback allowed, without a server of its own", async () => {
    const manifest = loadManifest(DEMO_MANIFEST, ENV);
    const secret = newSecret();
    const v = await startDemoVerification(manifest, "http://127.0.0.1:9999", {
      secret,
      secretFrom: { file: "/data/verification-secret" },
    });
    expect(v.server).toBeNull();
    expect(manifest.operators[0]?.external_users).toEqual({
      sign_up_url: "http://127.0.0.1:9999/sign-up",
      sign_in_url: "http://127.0.0.1:9999/sign-in",
      allow_private_addresses: true,
      secret,
    });
    const lines = riderBannerLines("http://api.test", v, manifest).join("\n");
    expect(lines).toContain("verification server http://127.0.0.1:9999 (DEMO_VERIFICATION_URL)");
    // Your own server needs the secret to verify the callbacks.
    expect(lines).toContain(
      `callbacks signed (Standard Webhooks) with ${secret} (kept in /data/verification-secret`,
    );
    expect(lines).not.toContain("/challenges");
  });

  it("signs with DEMO_VERIFICATION_SECRET, or with one generated once into DATA_DIR and kept there", async () => {
    const dir = await mkdtemp(join(tmpdir(), "demo-verification-secret-"));
    try {
      const generated = demoVerificationSecret(null, dir);
      const file = join(dir, VERIFICATION_SECRET_FILE);
      expect(generated).toEqual({ secret: expect.stringMatching(/^whsec_/), secretFrom: { file } });
      expect(readFileSync(file, "utf8").trim()).toBe(generated.secret);
      expect(statSync(file).mode & 0o777).toBe(0o600);
      expect(demoVerificationSecret(null, dir)).toEqual(generated);
      const given = newSecret();
      expect(demoVerificationSecret(given, dir)).toEqual({
        secret: given,
        secretFrom: "DEMO_VERIFICATION_SECRET",
      });
      const manifest = loadManifest(DEMO_MANIFEST, ENV);
      expect(demoSettings({ DEMO_VERIFICATION_SECRET: given }, manifest).verificationSecret).toBe(given);
      expect(() => demoSettings({ DEMO_VERIFICATION_SECRET: "not-whsec" }, manifest)).toThrow(
        DemoConfigError,
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
    expect(existsSync(dir)).toBe(false);
  });

  it("is read by the demo's settings, trailing slash dropped; anything but an http(s) base URL is a bad variable", () => {
    const manifest = loadManifest(DEMO_MANIFEST, ENV);
    expect(demoSettings({ DEMO_VERIFICATION_URL: "http://localhost:9000/" }, manifest).verificationUrl).toBe(
      "http://localhost:9000",
    );
    expect(demoSettings({}, manifest).verificationUrl).toBeNull();
    for (const bad of ["localhost:9000", "ftp://host", "http://u:p@host", "http://host/?a=1"])
      expect(() => demoSettings({ DEMO_VERIFICATION_URL: bad }, manifest), bad).toThrow(DemoConfigError);
  });
});
