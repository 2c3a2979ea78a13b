import { randomBytes, randomUUID } from "node:crypto";
import { z } from "zod";
import type { StaffRole } from "../../shared/domain/staff-roles.ts";
import type { Clock } from "../../shared/time/clock.ts";
import { hashSecret, type ScryptCost, verifySecret } from "../auth/secrets.ts";
import type { Db } from "../store/db.ts";
import { type Staff, staffRepository } from "./staff-repository.ts";
import { staffSessionRepository } from "./staff-session-repository.ts";

/** Long enough to resist guessing under the sign-in limits; bounded so scrypt's input stays small. */
export const PASSWORD_MIN = 10;
export const PASSWORD_MAX = 256;

export const StaffEmail = z.email().max(254);

/** Why a password is refused, or null when it will do. */
export function passwordProblem(password: string): string | null {
  if (password.length < PASSWORD_MIN) return `must be at least ${PASSWORD_MIN} characters`;
  if (password.length > PASSWORD_MAX) return `must be at most ${PASSWORD_MAX} characters`;
  return null;
}

/** A well-formed hash no password matches: an unknown email costs the same scrypt as a wrong password. */
const NOBODY_HASH = `scrypt$${randomBytes(16).toString("base64")}$${randomBytes(32).toString("base64")}`;

export type NewStaff = { email: string; role: StaffRole; operatorId: string | null; password: string };

/**
 * The console's staff: created, signed in, disabled and given a new password here, by the operator CLI and
 * the console alike. Disabling an account or resetting its password ends its sessions.
 */
export function createStaffService(deps: { db: Db; clock: Clock; cost?: ScryptCost }) {
  const staff = staffRepository(deps.db);
  const now = () => deps.clock.now().toISOString();
  const hash = (password: string) => hashSecret(password, deps.cost);

  return {
    /** The new staff member; "exists" when the email (whatever its case) is taken, or its operator is unknown. */
    async create(s: NewStaff): Promise<Staff | "exists" | "no-operator"> {
      if (await staff.findByEmail(s.email)) return "exists";
      if (s.operatorId !== null && !(await staff.operatorExists(s.operatorId))) return "no-operator";
      const ts = now();
      const created: Staff = {
        id: randomUUID(),
        operatorId: s.operatorId,
        email: s.email,
        passwordHash: await hash(s.password),
        role: s.role,
        disabledAt: null,
        createdAt: ts,
        updatedAt: ts,
      };
      await staff.insert(created);
      return created;
    },

    list: (operatorId?: string) => staff.list(operatorId),

    /**
     * The staff member these credentials sign in, or null, alike for an unknown email, a wrong password
     * and a disabled account (always after one scrypt, so timing tells them apart no better).
     */
    async authenticate(email: string, password: string): Promise<Staff | null> {
      // No email holds U+0000, and PostgreSQL refuses it in a query: such an email is unknown.
      const found = email.includes("\u0000") ? undefined : await staff.findByEmail(email);
      const ok = await verifySecret(password.slice(0, PASSWORD_MAX), found?.passwordHash ?? NOBODY_HASH);
      return ok && found && found.disabledAt === null && password.length <= PASSWORD_MAX ? found : null;
    },

    /** Disables the account and ends its sessions; null for an unknown email. */
    async disable(email: string): Promise<Staff | null> {
      const found = await staff.findByEmail(email);
      if (!found) return null;
      const ts = now();
      await deps.db.transaction().execute(async (trx) => {
        if (found.disabledAt === null) await staffRepository(trx).setDisabled(found.id, ts, ts);
        await staffSessionRepository(trx).revokeAllOf(found.id, ts);
      });
      return { ...found, disabledAt: found.disabledAt ?? ts };
    },

    /** Sets a new password and ends the account's sessions; null for an unknown email. */
    async resetPassword(email: string, password: string): Promise<Staff | null> {
      const found = await staff.findByEmail(email);
      if (!found) return null;
      const passwordHash = await hash(password);
      const ts = now();
      await deps.db.transaction().execute(async (trx) => {
        await staffRepository(trx).setPasswordHash(found.id, passwordHash, ts);
        await staffSessionRepository(trx).revokeAllOf(found.id, ts);
      });
      return { ...found, passwordHash, updatedAt: ts };
    },
  };
}

export type StaffService = ReturnType<typeof createStaffService>;
