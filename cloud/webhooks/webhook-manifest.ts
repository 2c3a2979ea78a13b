import { z } from "zod";
import { Uuid } from "../../shared/api/uuid.ts";
import { WEBHOOK_TYPES } from "../../shared/api/webhook.ts";
import { hostRefusal } from "../users/callback-address.ts";

/** The site manifest's `webhooks` of an operator: where its site events are sent and how they are signed. */

/**
 * Standard Webhooks secrets: `whsec_` and the base64 of 24 to 64 random bytes (the specification's
 * recommended range), so any of its libraries can verify with the same string.
 */
export function whsecProblem(s: string): string | null {
  if (!s.startsWith("whsec_")) return "must start with whsec_ (a Standard Webhooks secret)";
  const b64 = s.slice("whsec_".length);
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(b64) || b64.length % 4 !== 0)
    return "must be whsec_ followed by base64 (A–Z, a–z, 0–9, +, /, = padding)";
  const bytes = Buffer.from(b64, "base64").length;
  if (bytes < 24 || bytes > 64) return `must hold 24 to 64 bytes after whsec_ (it holds ${bytes})`;
  return null;
}

const WhsecSecret = z.string().superRefine((s, ctx) => {
  const problem = whsecProblem(s);
  if (problem) ctx.addIssue({ code: "custom", message: problem });
});

const EnvName = z.string().regex(/^[A-Z_][A-Z0-9_]*$/, "an environment variable name (A–Z, 0–9, _)");

/**
 * Why a webhook URL may not be used, or null. Without `allowPrivate`: https only, and neither an IP
 * literal outside the public unicast ranges, however spelt, nor a local-only name such as `LOCALHOST.`
 * (cloud/users/callback-address.ts `hostRefusal`; names are resolved and checked again at every delivery).
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
  secret: WhsecSecret.optional().describe("Signing secret, whsec_ + base64 (demos; prefer secret_env)"),
  secret_env: EnvName.optional().describe("Environment variable holding the signing secret, read at apply"),
  previous_secret: WhsecSecret.optional().describe(
    "During a rotation: the secret being replaced; messages carry a signature under each",
  ),
  previous_secret_env: EnvName.optional().describe("previous_secret, read from the environment at apply"),
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
  if ((w.secret === undefined) === (w.secret_env === undefined))
    ctx.addIssue({ code: "custom", path: ["secret"], message: "give exactly one of secret or secret_env" });
  if (w.previous_secret !== undefined && w.previous_secret_env !== undefined)
    ctx.addIssue({
      code: "custom",
      path: ["previous_secret"],
      message: "give at most one of previous_secret or previous_secret_env",
    });
  for (const message of webhookUrlProblems(w.url, w.allow_private))
    ctx.addIssue({ code: "custom", path: ["url"], message });
});
export type ManifestWebhook = z.infer<typeof ManifestWebhook>;
