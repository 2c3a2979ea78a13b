import type { z } from "zod";
import type { Executor } from "../store/db.ts";
import { signingSecrets } from "../webhooks/signing-secrets.ts";
import type { ExternalUsers, Rider } from "./rider-manifest.ts";
import { type OperatorCallbacks, userRepository } from "./user-repository.ts";

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
  const users = userRepository(trx);
  const cb = op.external_users;
  if (cb) {
    const declared: OperatorCallbacks = {
      operatorId,
      signUpUrl: cb.sign_up_url,
      signInUrl: cb.sign_in_url,
      allowPrivateAddresses: cb.allow_private_addresses,
      // Symmetric, so stored as given, like webhook secrets (docs/decisions/webhooks.md).
      secrets: signingSecrets(cb, ctx.env, `operator ${operatorId}: external_users`),
    };
    const stored = await users.callbacksOf(operatorId);
    if (!stored) {
      await users.insertCallbacks(declared, ts);
      out.created++;
    } else if (!sameCallbacks(stored, declared)) {
      await users.updateCallbacks(declared, ts);
      out.updated++;
    }
  }

  for (const r of op.riders) {
    const existing = await users.findByUserId(operatorId, r.user_id);
    if (existing) {
      if (r.service_user_id && r.service_user_id !== existing.id)
        throw new Error(
          `rider ${r.user_id}: already exists with service_user_id ${existing.id}, not ${r.service_user_id}`,
        );
      if (r.phone_number !== undefined && r.phone_number !== existing.phoneNumber) {
        await users.setPhoneNumber(existing, r.phone_number);
        out.updated++;
      }
      continue;
    }
    const id = r.service_user_id ?? riderId(ctx.derive, operatorId, r.user_id);
    if (await users.idTaken(id))
      throw new Error(`rider ${r.user_id}: service_user_id ${id} belongs to another user`);
    await users.insert({ id, operatorId, userId: r.user_id, phoneNumber: r.phone_number ?? null }, ts);
    out.created++;
  }
  return out;
}

function sameCallbacks(a: OperatorCallbacks, b: OperatorCallbacks): boolean {
  return (
    a.signUpUrl === b.signUpUrl &&
    a.signInUrl === b.signInUrl &&
    a.allowPrivateAddresses === b.allowPrivateAddresses &&
    a.secrets.length === b.secrets.length &&
    a.secrets.every((s, i) => s === b.secrets[i])
  );
}
