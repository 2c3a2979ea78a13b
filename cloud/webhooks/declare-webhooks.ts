import type { Executor } from "../store/db.ts";
import { signingSecrets } from "./signing-secrets.ts";
import { type EndpointSettings, webhookEndpointRepository } from "./webhook-endpoint-repository.ts";
import type { ManifestWebhook } from "./webhook-manifest.ts";

type Declared = { created: number; updated: number };
type Env = Record<string, string | undefined>;

/** Why an endpoint left out of the manifest stopped (kept with its log; declaring it again restores it). */
export const NOT_DECLARED = "not in the site manifest";

/**
 * Applies an operator's `webhooks` from the site manifest: creates and updates its endpoints, and disables
 * (never deletes) the ones it no longer declares, so their messages and log stay for the operator CLI.
 * Declaring an endpoint enables it, also after its receiver answered 410 Gone. An endpoint id of another
 * operator is refused: its messages hold that operator's events.
 */
export async function declareWebhooks(
  trx: Executor,
  ctx: { operatorId: string; ts: string; env: Env },
  webhooks: ManifestWebhook[],
): Promise<Declared> {
  const out: Declared = { created: 0, updated: 0 };
  const { operatorId, ts } = ctx;
  const endpoints = webhookEndpointRepository(trx);
  const declared = new Set<string>();
  for (const w of webhooks) {
    declared.add(w.id);
    const settings: EndpointSettings = {
      url: w.url,
      secrets: signingSecrets(w, ctx.env, `webhook ${w.id}`),
      types: [...new Set(w.types)],
      delivery: w.delivery,
      allowPrivate: w.allow_private,
      enabled: true,
      disabledReason: null,
    };
    const stored = await endpoints.find(w.id);
    if (!stored) {
      await endpoints.insert({ id: w.id, operatorId, ...settings, createdAt: ts, updatedAt: ts });
      out.created++;
      continue;
    }
    if (stored.operatorId !== operatorId)
      throw new Error(`webhook ${w.id}: the id belongs to an endpoint of another operator`);
    if (differs(stored, settings)) {
      await endpoints.update(w.id, settings, ts);
      out.updated++;
    }
  }
  for (const id of (await endpoints.enabledIds(operatorId)).filter((id) => !declared.has(id))) {
    await endpoints.disable(id, NOT_DECLARED, ts);
    out.updated++;
  }
  return out;
}

/** Whether the stored endpoint has any setting other than the declared one (lists compared in order). */
function differs(stored: EndpointSettings, declared: EndpointSettings): boolean {
  return (Object.keys(declared) as (keyof EndpointSettings)[]).some(
    (k) => JSON.stringify(stored[k]) !== JSON.stringify(declared[k]),
  );
}
