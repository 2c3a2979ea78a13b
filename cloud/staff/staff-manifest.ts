import { z } from "zod";
import { STAFF_ROLES } from "../../shared/domain/staff-roles.ts";
import { hashSecret, verifySecret } from "../auth/secrets.ts";
import type { Executor } from "../store/db.ts";
import { staffRepository } from "./staff-repository.ts";
import { StaffEmail } from "./staff-service.ts";
import { staffSessionRepository } from "./staff-session-repository.ts";

/** The site manifest's console staff: an operator's `staff`, and the `superadmins` who see every operator. */
export const StaffFields = z.strictObject({
  email: StaffEmail.describe("Signs in with it; unique whatever its case"),
  role: z
    .enum(STAFF_ROLES)
    .describe("viewer reads everything of its operator, operator also acts, admin also manages staff"),
  password_env: z
    .string()
    .regex(/^[A-Z_][A-Z0-9_]*$/)
    .optional()
    .describe("Environment variable holding the password; only its scrypt hash is stored"),
  password_hash: z
    .string()
    .startsWith("scrypt$")
    .optional()
    .describe("The password's scrypt hash, as client secrets are hashed"),
});

export const ManifestStaff = StaffFields.refine(
  (s) => (s.password_env === undefined) !== (s.password_hash === undefined),
  { message: "give exactly one of password_env or password_hash" },
);
type ManifestStaff = z.infer<typeof ManifestStaff>;

/** A declared staff member and the operator it belongs to (null: a superadmin). */
export type DeclaredStaff = { operatorId: string | null; staff: ManifestStaff };

type Env = Record<string, string | undefined>;

/**
 * The password hash each declared staff member gets, by lower-case email: the stored one while the
 * password is unchanged (re-applying writes nothing), else a fresh hash. Before the apply's transaction,
 * as scrypt is slow on purpose.
 */
export async function staffPasswordHashes(
  db: Executor,
  declared: readonly DeclaredStaff[],
  env: Env,
): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const staff = staffRepository(db);
  for (const { staff: s } of declared) {
    if (s.password_hash) {
      out.set(s.email.toLowerCase(), s.password_hash);
      continue;
    }
    const plain = s.password_env ? env[s.password_env] : undefined;
    if (!plain)
      throw new Error(`staff ${s.email}: password_env: environment variable ${s.password_env} is not set`);
    const current = (await staff.findByEmail(s.email))?.passwordHash;
    const keep = current !== undefined && (await verifySecret(plain, current));
    out.set(s.email.toLowerCase(), keep ? current : await hashSecret(plain));
  }
  return out;
}

/**
 * Creates the declared staff and updates their role, operator and password. Like the rest of the manifest
 * it never deletes, and it never enables again an account `npm run operator -- staff disable` disabled.
 * A changed password ends the account's sessions, as a reset does.
 */
export async function declareStaff(
  trx: Executor,
  ctx: { ts: string; derive: (...parts: string[]) => string; hashes: ReadonlyMap<string, string> },
  declared: readonly DeclaredStaff[],
): Promise<{ created: number; updated: number }> {
  const out = { created: 0, updated: 0 };
  const staff = staffRepository(trx);
  for (const { operatorId, staff: s } of declared) {
    const key = s.email.toLowerCase();
    const passwordHash = ctx.hashes.get(key) as string;
    const existing = await staff.findByEmail(s.email);
    if (!existing) {
      const id = ctx.derive("staff", key);
      const fields = { operatorId, email: s.email, passwordHash, role: s.role, disabledAt: null };
      await staff.insert({ id, ...fields, createdAt: ctx.ts, updatedAt: ctx.ts });
      out.created++;
      continue;
    }
    let changed = false;
    if (existing.role !== s.role || existing.operatorId !== operatorId) {
      await staff.setScope(existing.id, { role: s.role, operatorId }, ctx.ts);
      changed = true;
    }
    if (existing.passwordHash !== passwordHash) {
      await staff.setPasswordHash(existing.id, passwordHash, ctx.ts);
      await staffSessionRepository(trx).revokeAllOf(existing.id, ctx.ts);
      changed = true;
    }
    if (changed) out.updated++;
  }
  return out;
}
