import type { z } from "zod";
import type { Executor } from "../store/db.ts";
import { toJson } from "../store/json-column.ts";
import { signingSecrets } from "../webhooks/signing-secrets.ts";
import type { ExternalUsers, Rider } from "./rider-manifest.ts";

type Declared = { created: number; updated: number };

/** The id a manifest rider gets when the manifest names none: stable across re-applies. */
export function riderId(derive: (...parts: string[]) => string, operatorId: string, userId: string): string {
  return derive(operatorId, "rider", userId);
}

/**
 * Applies an operator's `external_users` (its callback addresses and signing secrets) and `riders` from the
 * site manifest.
 * Like the rest of the manifest it creates and updates, never deletes: an operator without the block keeps
 * the addresses it had. A rider that already exists (signed up, or applied before) keeps its id; naming
 * another service_user_id for it is an error, as the id is what its sessions and memberships hold.
 */
export async function declareRiders(
  trx: Executor,
  ctx: {
    operatorId: string;
    ts: string;
    derive: (...parts: string[]) => string;
    env: Record<string, string | undefined>;
  },
  op: { external_users?: z.infer<typeof ExternalUsers>; riders: z.infer<typeof Rider>[] },
): Promise<Declared> {
  const out: Declared = { created: 0, updated: 0 };
  const { operatorId, ts } = ctx;
  const cb = op.external_users;
  if (cb) {
    const row = {
      sign_up_url: cb.sign_up_url,
      sign_in_url: cb.sign_in_url,
      allow_private_addresses: cb.allow_private_addresses ? 1 : 0,
      // Symmetric, so stored as given, like webhook secrets (docs/decisions/webhooks.md).
      secrets: toJson(signingSecrets(cb, ctx.env, `operator ${operatorId}: external_users`)),
    };
    const stored = await trx
      .selectFrom("external_user_callbacks")
      .selectAll()
      .where("operator_id", "=", operatorId)
      .executeTakeFirst();
    if (!stored) {
      await trx
        .insertInto("external_user_callbacks")
        .values({ operator_id: operatorId, ...row, updated_at: ts })
        .execute();
      out.created++;
    } else if (Object.entries(row).some(([k, v]) => stored[k as keyof typeof row] !== v)) {
      await trx
        .updateTable("external_user_callbacks")
        .set({ ...row, updated_at: ts })
        .where("operator_id", "=", operatorId)
        .execute();
      out.updated++;
    }
  }

  for (const r of op.riders) {
    const existing = await trx
      .selectFrom("external_users")
      .selectAll()
      .where("operator_id", "=", operatorId)
      .where("user_id", "=", r.user_id)
      .executeTakeFirst();
    if (existing) {
      if (r.service_user_id && r.service_user_id !== existing.id)
        throw new Error(
          `rider ${r.user_id}: already exists with service_user_id ${existing.id}, not ${r.service_user_id}`,
        );
      if (r.phone_number !== undefined && r.phone_number !== existing.phone_number) {
        await trx
          .updateTable("external_users")
          .set({ phone_number: r.phone_number })
          .where("id", "=", existing.id)
          .execute();
        out.updated++;
      }
      continue;
    }
    const id = r.service_user_id ?? riderId(ctx.derive, operatorId, r.user_id);
    const taken = await trx.selectFrom("external_users").select("id").where("id", "=", id).executeTakeFirst();
    if (taken) throw new Error(`rider ${r.user_id}: service_user_id ${id} belongs to another user`);
    await trx
      .insertInto("external_users")
      .values({
        id,
        operator_id: operatorId,
        user_id: r.user_id,
        phone_number: r.phone_number ?? null,
        created_at: ts,
      })
      .execute();
    out.created++;
  }
  return out;
}
