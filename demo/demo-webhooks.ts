import { randomBytes } from "node:crypto";
import { derivedId } from "../cloud/manifest/apply-manifest.ts";
import type { SiteManifest } from "../cloud/manifest/manifest-schema.ts";
import { whsecProblem } from "../cloud/webhooks/signing-secrets.ts";
import { webhookUrlProblems } from "../cloud/webhooks/webhook-manifest.ts";
import { WEBHOOK_TYPES } from "../shared/api/webhook.ts";

/** The demo operator's webhook endpoint (DEMO_WEBHOOK_URL), when one is set. */
export type DemoWebhook = { endpointId: string; url: string; secret: string; generated: boolean };

/**
 * DEMO_WEBHOOK_URL and DEMO_WEBHOOK_SECRET, checked: the URL (http(s), any address: the demo allows private
 * ones), and the secret (`whsec_…`), null when unset. A problem names the variable.
 */
export function demoWebhookSettings(
  env: Record<string, string | undefined>,
): { url: string | null; secret: string | null } | { problem: string } {
  const url = env.DEMO_WEBHOOK_URL || null;
  const secret = env.DEMO_WEBHOOK_SECRET || null;
  if (url) {
    const problems = webhookUrlProblems(url, true);
    if (problems.length > 0) return { problem: `DEMO_WEBHOOK_URL=${url}: ${problems.join("; ")}` };
  }
  if (secret) {
    const problem = whsecProblem(secret);
    if (problem) return { problem: `DEMO_WEBHOOK_SECRET: ${problem}` };
  }
  return { url, secret };
}

/** A fresh Standard Webhooks secret: `whsec_` and 32 random bytes in base64. */
export const generateWebhookSecret = () => `whsec_${randomBytes(32).toString("base64")}`;

/**
 * Registers DEMO_WEBHOOK_URL for the manifest's first operator: every type, direct delivery (each event at
 * once), private addresses allowed (a receiver on this machine), signed with DEMO_WEBHOOK_SECRET or a
 * secret generated for this run. Null without a URL.
 */
export function declareDemoWebhook(
  manifest: SiteManifest,
  settings: { url: string | null; secret: string | null },
): DemoWebhook | null {
  const op = manifest.operators[0];
  if (!settings.url || !op) return null;
  const endpointId = derivedId(op.id, "webhook", "demo");
  const secret = settings.secret ?? generateWebhookSecret();
  op.webhooks = [
    ...op.webhooks.filter((w) => w.id !== endpointId),
    {
      id: endpointId,
      url: settings.url,
      secret,
      types: [...WEBHOOK_TYPES],
      delivery: "direct",
      allow_private: true,
    },
  ];
  return { endpointId, url: settings.url, secret, generated: settings.secret === null };
}

/** The banner's lines on the demo webhook. */
export function webhookBannerLines(w: DemoWebhook | null): string[] {
  if (!w) return [];
  return [
    `  Webhooks (Standard Webhooks, direct delivery) to ${w.url} (DEMO_WEBHOOK_URL)`,
    `    signing secret ${w.secret}${w.generated ? " (generated for this run; set DEMO_WEBHOOK_SECRET to keep one)" : ""}`,
    "    delivery log: npm run operator -- webhook-log",
  ];
}
