import { createHmac, createSecretKey, type KeyObject } from "node:crypto";
import { LruMap } from "../auth/lru-map.ts";

/** The Standard Webhooks headers of one attempt. */
export type SignatureHeaders = {
  "webhook-id": string;
  "webhook-timestamp": string;
  "webhook-signature": string;
};

const PREFIX = "whsec_";
/** Key objects kept: two secrets per operator and per webhook endpoint during a rotation. */
const KEYS = 10_000;
const keys = new LruMap<string, KeyObject>(KEYS);

/**
 * The HMAC key of a `whsec_…` secret: the bytes its base64 stands for (signing-secrets.ts checks it),
 * made into a key object once: preparing a raw key again costs as much as the HMAC of a callback.
 */
function keyOf(secret: string): KeyObject {
  let key = keys.get(secret);
  if (key) return key;
  const bytes = Buffer.from(secret.startsWith(PREFIX) ? secret.slice(PREFIX.length) : secret, "base64");
  if (bytes.length === 0) throw new Error("webhook signing secret is empty");
  key = createSecretKey(bytes);
  keys.set(secret, key);
  return key;
}

/**
 * Signs a message the Standard Webhooks way: `v1,<base64>` of HMAC-SHA256 over `id.timestamp.body`, once
 * per valid secret (newest first, space-separated), so a receiver that still holds the previous secret
 * during a rotation verifies too. The timestamp is the attempt's, so a retry is signed afresh under the
 * same id. The HMAC is node:crypto's (the `standardwebhooks` package computes it in JavaScript, a cost on
 * every sign-in); its tests check every signature with that package's verifier.
 */
export function signWebhook(o: {
  id: string;
  at: Date;
  body: string;
  secrets: readonly string[];
}): SignatureHeaders {
  if (o.secrets.length === 0) throw new Error(`webhook ${o.id}: no signing secret`);
  const timestamp = String(Math.floor(o.at.getTime() / 1000));
  const signed = `${o.id}.${timestamp}.${o.body}`;
  const signatures = o.secrets.map(
    (secret) => `v1,${createHmac("sha256", keyOf(secret)).update(signed, "utf8").digest("base64")}`,
  );
  return { "webhook-id": o.id, "webhook-timestamp": timestamp, "webhook-signature": signatures.join(" ") };
}
