import { Webhook } from "standardwebhooks";

/** The Standard Webhooks headers of one attempt. */
export type SignatureHeaders = {
  "webhook-id": string;
  "webhook-timestamp": string;
  "webhook-signature": string;
};

/**
 * Signs a message the Standard Webhooks way, with the `standardwebhooks` library itself: `v1,<base64>`
 * of HMAC-SHA256 over `id.timestamp.body`, once per valid secret (newest first, space-separated), so a
 * receiver that still holds the previous secret during a rotation verifies too. The timestamp is the
 * attempt's, so a retry is signed afresh under the same id.
 */
export function signWebhook(o: {
  id: string;
  at: Date;
  body: string;
  secrets: readonly string[];
}): SignatureHeaders {
  if (o.secrets.length === 0) throw new Error(`webhook ${o.id}: no signing secret`);
  const signatures = o.secrets.map((secret) => new Webhook(secret).sign(o.id, o.at, o.body));
  return {
    "webhook-id": o.id,
    "webhook-timestamp": String(Math.floor(o.at.getTime() / 1000)),
    "webhook-signature": signatures.join(" "),
  };
}
