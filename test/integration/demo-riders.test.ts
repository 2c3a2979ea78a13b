import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadManifest } from "../../cloud/manifest/load-manifest.ts";
import {
  DEMO_MANIFEST,
  DemoConfigError,
  demoBanner,
  demoSettings,
  type RunningDemo,
  startDemo,
} from "../../demo/demo.ts";
import { riderBannerLines, startDemoVerification } from "../../demo/demo-riders.ts";

const run = promisify(execFile);
const ALL_GATEWAYS = "gw-cs-lockers,gw-ms-docks,gw-hb-house,gw-pk-house";
const ENV = { DEMO_CLIENT_SECRET: "x".repeat(12), DEMO_GATEWAY_SECRET: "y".repeat(12) };

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

  it("tells the rider's phone number at sign-in, as the manifest declares it", async () => {
    const server = demo.verification.server;
    expect(server).not.toBeNull();
    const post = (path: string, body: unknown) =>
      fetch(`${demo.verification.url}${path}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      });
    const minted = (await (await post("/challenges", { user_id: "rider-ann" })).json()) as {
      challenge_token: string;
    };
    const answer = await post("/sign-in", { user_id: "rider-ann", challenge_token: minted.challenge_token });
    expect(await answer.json()).toEqual({
      service_user_id: "7d4a52e0-3c1b-4f6e-8a90-1b2c3d4e5f01",
      phone_number: "+31612345678",
    });
    expect(
      (await post("/sign-in", { user_id: "rider-bob", challenge_token: "never-registered" })).status,
    ).toBe(401);
  });
});

describe("DEMO_VERIFICATION_URL", () => {
  it("points the demo operator's callbacks at <url>/sign-up and <url>/sign-in, loopback allowed, without a server of its own", async () => {
    const manifest = loadManifest(DEMO_MANIFEST, ENV);
    const v = await startDemoVerification(manifest, "http://127.0.0.1:9999");
    expect(v.server).toBeNull();
    expect(manifest.operators[0]?.external_users).toEqual({
      sign_up_url: "http://127.0.0.1:9999/sign-up",
      sign_in_url: "http://127.0.0.1:9999/sign-in",
      allow_private_addresses: true,
    });
    const lines = riderBannerLines("http://api.test", v, manifest).join("\n");
    expect(lines).toContain("verification server http://127.0.0.1:9999 (DEMO_VERIFICATION_URL)");
    expect(lines).not.toContain("/challenges");
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
