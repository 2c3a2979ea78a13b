import { derivedId } from "../cloud/manifest/apply-manifest.ts";
import type { SiteManifest } from "../cloud/manifest/manifest-schema.ts";
import { riderId } from "../cloud/users/declare-riders.ts";
import { type DemoRider, DemoVerificationServer } from "./verification-server.ts";

/** Where the demo operator's verification callbacks go: the demo's own server, or DEMO_VERIFICATION_URL. */
export type DemoVerification = { url: string; server: DemoVerificationServer | null; operatorId: string };

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
 * manifest's first operator's callbacks at it, loopback allowed.
 */
export async function startDemoVerification(
  manifest: SiteManifest,
  url: string | null,
): Promise<DemoVerification> {
  const op = manifest.operators[0];
  if (!op) throw new Error("the demo manifest has no operator");
  const server = url ? null : await new DemoVerificationServer(demoRiders(op)).start();
  const base = url ?? (server as DemoVerificationServer).url;
  op.external_users = {
    sign_up_url: `${base}/sign-up`,
    sign_in_url: `${base}/sign-in`,
    allow_private_addresses: true,
  };
  return { url: base, server, operatorId: op.id };
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
  return [
    `  Riders (external users): ${op?.riders.map((r) => r.user_id).join(", ")}; verification server ${verification.url}${own ? "" : " (DEMO_VERIFICATION_URL)"}`,
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
