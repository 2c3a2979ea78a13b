import type { WebhookType } from "../../shared/api/webhook.ts";
import type { Executor } from "../store/db.ts";
import { toJson } from "../store/json-column.ts";
import { signingSecrets } from "./signing-secrets.ts";
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
  const declared = new Set<string>();
  for (const w of webhooks) {
    declared.add(w.id);
    const row = {
      url: w.url,
      secrets: toJson(signingSecrets(w, ctx.env, `webhook ${w.id}`)),
      types: toJson<WebhookType[]>([...new Set(w.types)]),
      delivery: w.delivery,
      allow_private: w.allow_private ? 1 : 0,
      enabled: 1,
      disabled_reason: null,
    };
    const stored = await trx
      .selectFrom("webhook_endpoints")
      .selectAll()
      .where("id", "=", w.id)
      .executeTakeFirst();
    if (!stored) {
      await trx
        .insertInto("webhook_endpoints")
        .values({ id: w.id, operator_id: operatorId, ...row, created_at: ts, updated_at: ts })
        .execute();
      out.created++;
      continue;
    }
    if (stored.operator_id !== operatorId)
      throw new Error(`webhook ${w.id}: the id belongs to an endpoint of another operator`);
    if (Object.entries(row).some(([k, v]) => stored[k as keyof typeof row] !== v)) {
      await trx
        .updateTable("webhook_endpoints")
        .set({ ...row, updated_at: ts })
        .where("id", "=", w.id)
        .execute();
      out.updated++;
    }
  }
  const leftOut = await trx
    .selectFrom("webhook_endpoints")
    .select("id")
    .where("operator_id", "=", operatorId)
    .where("enabled", "=", 1)
    .execute();
  for (const { id } of leftOut.filter((e) => !declared.has(e.id))) {
    await trx
      .updateTable("webhook_endpoints")
      .set({ enabled: 0, disabled_reason: NOT_DECLARED, updated_at: ts })
      .where("id", "=", id)
      .execute();
    out.updated++;
  }
  return out;
}
