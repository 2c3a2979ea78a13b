import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { whsecProblem } from "./signing-secrets.ts";
import { ManifestWebhook, webhookUrlProblems } from "./webhook-manifest.ts";

const secret = (bytes: number) => `whsec_${randomBytes(bytes).toString("base64")}`;
const ID = "0b5c7a52-1d7e-4c3a-9a8b-2f2f1e0d9c01";

describe("a manifest webhook", () => {
  it("accepts Standard Webhooks secrets of 24 to 64 bytes and refuses anything else", () => {
    expect(whsecProblem(secret(32))).toBeNull();
    expect(whsecProblem(secret(24))).toBeNull();
    expect(whsecProblem(secret(64))).toBeNull();
    expect(whsecProblem(secret(16))).toMatch(/24 to 64 bytes/);
    expect(whsecProblem(randomBytes(32).toString("base64"))).toMatch(/whsec_/);
    expect(whsecProblem("whsec_not base64!")).toMatch(/base64/);
  });

  it("refuses loopback, private, link-local and localhost addresses unless allow_private is set (S26)", () => {
    for (const url of [
      "https://127.0.0.1/hook",
      "https://169.254.169.254/latest",
      "https://[::1]/hook",
      "https://10.0.0.5:6379/",
      "https://192.168.1.20/hook",
      "https://localhost/hook",
      "https://api.localhost/hook",
    ]) {
      expect(webhookUrlProblems(url, false).join(), url).toMatch(/not a public address/);
      expect(webhookUrlProblems(url, true), url).toEqual([]);
    }
    expect(webhookUrlProblems("https://hooks.example.com/parking", false)).toEqual([]);
  });

  it("refuses hostile spellings of loopback, private and metadata addresses as it refuses the plain ones (S26)", () => {
    for (const url of [
      "https://LOCALHOST./hook",
      "https://localhost../hook",
      "https://Api.LocalHost./hook",
      "https://metadata.google.internal/computeMetadata/v1/",
      "https://printer.local/hook",
      "https://intranet/hook",
      "https://[::127.0.0.1]/hook",
      "https://[::ffff:7f00:1]/hook",
      "https://[::ffff:169.254.169.254]/latest",
      "https://[64:ff9b::a9fe:a9fe]/latest",
      "https://[0:0:0:0:0:0:0:1]/hook",
      "https://2130706433/hook",
      "https://0x7f.1/hook",
      "https://017700000001/hook",
      "https://0xa9fea9fe/latest",
      "https://0/hook",
    ]) {
      const parsed = ManifestWebhook.safeParse({ id: ID, url, secret: secret(32) });
      expect(parsed.success, url).toBe(false);
      expect(
        parsed.error?.issues.map((i) => [i.path.join("."), i.message]),
        url,
      ).toEqual([
        ["url", expect.stringMatching(/not a public address \(set allow_private: true to allow it\)$/)],
      ]);
      expect(webhookUrlProblems(url, true), url).toEqual([]);
    }
  });

  it("needs https unless allow_private is set, and never credentials or a fragment", () => {
    expect(webhookUrlProblems("http://hooks.example.com/", false)).toEqual([
      "must be https unless allow_private is true",
    ]);
    expect(webhookUrlProblems("http://127.0.0.1:9000/", true)).toEqual([]);
    expect(webhookUrlProblems("https://u:p@hooks.example.com/#x", true)).toEqual([
      "must not hold credentials (user:password@)",
      "must not hold a #fragment",
    ]);
    expect(webhookUrlProblems("ftp://hooks.example.com/", true)).toEqual(["must be an http(s) URL"]);
  });

  it("defaults to every type, aggregated delivery and public addresses only", () => {
    const w = ManifestWebhook.parse({ id: ID, url: "https://hooks.example.com/", secret: secret(32) });
    expect(w).toMatchObject({
      types: ["connection", "connection_confirmed", "alarm", "status"],
      delivery: "aggregated",
      allow_private: false,
    });
  });

  it("needs exactly one of secret and secret_env", () => {
    const base = { id: ID, url: "https://hooks.example.com/" };
    expect(ManifestWebhook.safeParse(base).success).toBe(false);
    expect(
      ManifestWebhook.safeParse({ ...base, secret: secret(32), secret_env: "HOOK_SECRET" }).success,
    ).toBe(false);
    expect(ManifestWebhook.safeParse({ ...base, secret_env: "HOOK_SECRET" }).success).toBe(true);
  });
});
