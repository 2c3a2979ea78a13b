import { randomBytes } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { derivedId } from "../cloud/manifest/apply-manifest.ts";
import type { SiteManifest } from "../cloud/manifest/manifest-schema.ts";
import { riderId } from "../cloud/users/declare-riders.ts";
import { whsecProblem } from "../cloud/webhooks/signing-secrets.ts";
import type { Clock } from "../shared/time/clock.ts";
import { type DemoRider, DemoVerificationServer } from "./verification-server.ts";

/** Where the demo operator's verification callbacks go: the demo's own server, or DEMO_VERIFICATION_URL. */
export type DemoVerification = {
  url: string;
  server: DemoVerificationServer | null;
  operatorId: string;
  /** The callbacks' signing secret (`whsec_…`) and where it came from. */
  secret: string;
  secretFrom: "DEMO_VERIFICATION_SECRET" | { file: string };
};

/** Where the demo keeps the signing secret it generated, so a server of your own keeps verifying. */
export const VERIFICATION_SECRET_FILE = "verification-secret";

/** DEMO_VERIFICATION_SECRET, checked (`whsec_…`); null when unset. */
export function verificationSecretFrom(value: string | undefined): string | null | { problem: string } {
  if (value === undefined || value === "") return null;
  const problem = whsecProblem(value);
  return problem ? { problem: `DEMO_VERIFICATION_SECRET: ${problem}` } : value;
}

/**
 * The callbacks' signing secret: DEMO_VERIFICATION_SECRET, or one generated once into DATA_DIR (like the
 * cloud's own generated secrets), so it survives restarts of the demo.
 */
export function demoVerificationSecret(
  given: string | null,
  dataDir: string,
): Pick<DemoVerification, "secret" | "secretFrom"> {
  if (given) return { secret: given, secretFrom: "DEMO_VERIFICATION_SECRET" };
  const file = path.join(dataDir, VERIFICATION_SECRET_FILE);
  const kept = existsSync(file) ? readFileSync(file, "utf8").trim() : "";
  if (kept && whsecProblem(kept) === null) return { secret: kept, secretFrom: { file } };
  const secret = `whsec_${randomBytes(32).toString("base64")}`;
  writeFileSync(file, `${secret}\n`, { mode: 0o600 });
  return { secret, secretFrom: { file } };
}

/** DEMO_VERIFICATION_URL, checked: an http(s) base URL (`<url>/sign-up`, `<url>/sign-in`), or null. */
export function verificationUrlFrom(value: string | undefined): string | { problem: string } | null {
  if (value === undefined || value === "") return null;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return { problem: `DEMO_VERIFICATION_URL=${value}: not a URL (e.g. http://127.0.0.1:9000)` };
  }
  if (url.protocol !== "http:" && url.protocol !== "https:")
    return { problem: `DEMO_VERIFICATION_URL=${value}: must be an http(s) URL` };
  if (url.username || url.password || url.search || url.hash)
    return { problem: `DEMO_VERIFICATION_URL=${value}: a base URL without credentials, query or #fragment` };
  return value.replace(/\/+$/, "");
}

/** The riders the demo manifest declares for an operator, with their ids. */
export function demoRiders(op: SiteManifest["operators"][number]): DemoRider[] {
  return op.riders.map((r) => ({
    userId: r.user_id,
    serviceUserId: r.service_user_id ?? riderId(derivedId, op.id, r.user_id),
    ...(r.phone_number ? { phoneNumber: r.phone_number } : {}),
  }));
}

/**
 * Starts the demo operator's verification server (unless `url` names another one) and points the
 * manifest's first operator's callbacks at it, loopback allowed, signed with `signing.secret`.
 */
export async function startDemoVerification(
  manifest: SiteManifest,
  url: string | null,
  signing: Pick<DemoVerification, "secret" | "secretFrom">,
  clock?: Clock,
): Promise<DemoVerification> {
  const op = manifest.operators[0];
  if (!op) throw new Error("the demo manifest has no operator");
  const server = url
    ? null
    : await new DemoVerificationServer(demoRiders(op), { secret: signing.secret, clock }).start();
  const base = url ?? (server as DemoVerificationServer).url;
  op.external_users = {
    sign_up_url: `${base}/sign-up`,
    sign_in_url: `${base}/sign-in`,
    allow_private_addresses: true,
    secret: signing.secret,
  };
  return { url: base, server, operatorId: op.id, ...signing };
}

/** The banner's lines on riders: how to sign one up and in with curl. */
export function riderBannerLines(
  base: string,
  verification: DemoVerification,
  manifest: SiteManifest,
): string[] {
  const op = manifest.operators.find((o) => o.id === verification.operatorId);
  const rider = op ? demoRiders(op)[0] : undefined;
  if (!rider) return [];
  const json = "-H 'content-type: application/json'";
  const auth = `${base}/external-users-auth/v1`;
  const own = verification.server !== null;
  const from = verification.secretFrom;
  return [
    `  Riders (external users): ${op?.riders.map((r) => r.user_id).join(", ")}; verification server ${verification.url}${own ? "" : " (DEMO_VERIFICATION_URL)"}`,
    ...(own
      ? ["    it accepts only callbacks signed by the service (Standard Webhooks)"]
      : [
          `    callbacks signed (Standard Webhooks) with ${verification.secret}${typeof from === "string" ? "" : ` (kept in ${from.file}; set DEMO_VERIFICATION_SECRET to choose one)`}`,
        ]),
    "  Sign a rider up:",
    `    curl -s ${json} -d '{"user_id":"${rider.userId}","operator_id":"${verification.operatorId}"}' ${auth}/sign-up`,
    ...(own
      ? [
          "  The rider's app registers a one-time challenge with the operator's server (valid 60 s):",
          `    curl -s ${json} -d '{"user_id":"${rider.userId}","challenge_token":"nonce-1"}' ${verification.url}/challenges`,
        ]
      : ["  Get a challenge token for the rider from your verification server, then"]),
    "  Sign in (answers access_token and refresh_token; use the access token as $TOKEN):",
    `    curl -s ${json} -d '{"service_user_id":"${rider.serviceUserId}","operator_id":"${verification.operatorId}","challenge_token":"nonce-1"}' ${auth}/sign-in`,
  ];
}
