import { z } from "zod";
import { Uuid } from "../../shared/api/uuid.ts";
import { WEBHOOK_TYPES } from "../../shared/api/webhook.ts";
import { hostRefusal } from "../outbound/callback-address.ts";
import { checkSigningSecrets, SigningSecretFields } from "./signing-secrets.ts";

/** The site manifest's `webhooks` of an operator: where its site events are sent and how they are signed. */

/**
 * Why a webhook URL may not be used, or null. Without `allowPrivate`: https only, and neither an IP
 * literal outside the public unicast ranges, however spelt, nor a local-only name such as `LOCALHOST.`
 * (cloud/outbound/callback-address.ts `hostRefusal`; names are resolved and checked again at every delivery).
 */
export function webhookUrlProblems(s: string, allowPrivate: boolean): string[] {
  let url: URL;
  try {
    url = new URL(s);
  } catch {
    return ["must be an absolute http(s) URL"];
  }
  const out: string[] = [];
  if (url.protocol !== "https:" && url.protocol !== "http:") return ["must be an http(s) URL"];
  if (url.username || url.password) out.push("must not hold credentials (user:password@)");
  if (url.hash) out.push("must not hold a #fragment");
  if (allowPrivate) return out;
  if (url.protocol === "http:") out.push("must be https unless allow_private is true");
  const refused = hostRefusal(url);
  if (refused) out.push(`${refused} (set allow_private: true to allow it)`);
  return out;
}

export const WebhookFields = z.strictObject({
  id: Uuid.describe("Fixed id of the endpoint (the operator CLI names endpoints by it)"),
  url: z.string().max(2048).describe("Where the webhooks are POSTed (https unless allow_private)"),
  ...SigningSecretFields,
  types: z
    .array(z.enum(WEBHOOK_TYPES))
    .min(1)
    .default([...WEBHOOK_TYPES])
    .describe("The event types sent to this endpoint (default all)"),
  delivery: z
    .enum(["aggregated", "direct"])
    .default("aggregated")
    .describe(
      "aggregated: one message per type and window (alarm ~1 min, others ~5 min); direct: each event",
    ),
  allow_private: z
    .boolean()
    .default(false)
    .describe("Let this endpoint be on loopback, private or link-local addresses and use plain http"),
});

export const ManifestWebhook = WebhookFields.superRefine((w, ctx) => {
  checkSigningSecrets(w, ctx);
  for (const message of webhookUrlProblems(w.url, w.allow_private))
    ctx.addIssue({ code: "custom", path: ["url"], message });
});
export type ManifestWebhook = z.infer<typeof ManifestWebhook>;
