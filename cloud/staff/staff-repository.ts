import { sql } from "kysely";
import type { StaffRole } from "../../shared/domain/staff-roles.ts";
import type { Executor } from "../store/db.ts";
import type { StaffTable } from "../store/tables/staff-tables.ts";

export type Staff = {
  id: string;
  /** null: a superadmin, who sees every operator */
  operatorId: string | null;
  email: string;
  passwordHash: string;
  role: StaffRole;
  disabledAt: string | null;
  createdAt: string;
  updatedAt: string;
};

const toStaff = (r: StaffTable): Staff => ({
  id: r.id,
  operatorId: r.operator_id,
  email: r.email,
  passwordHash: r.password_hash,
  role: r.role,
  disabledAt: r.disabled_at,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

/** An email as compared: its case does not count. */
const emailKey = (email: string) => email.toLowerCase();

/** The store's console staff. Emails are matched whatever their case. */
export function staffRepository(db: Executor) {
  return {
    async insert(s: Staff): Promise<void> {
      await db
        .insertInto("staff")
        .values({
          id: s.id,
          operator_id: s.operatorId,
          email: s.email,
          password_hash: s.passwordHash,
          role: s.role,
          disabled_at: s.disabledAt,
          created_at: s.createdAt,
          updated_at: s.updatedAt,
        })
        .execute();
    },

    async findByEmail(email: string): Promise<Staff | undefined> {
      const row = await db
        .selectFrom("staff")
        .selectAll()
        .where(sql<string>`lower(email)`, "=", emailKey(email))
        .executeTakeFirst();
      return row && toStaff(row);
    },

    async find(id: string): Promise<Staff | undefined> {
      const row = await db.selectFrom("staff").selectAll().where("id", "=", id).executeTakeFirst();
      return row && toStaff(row);
    },

    /** Whether the operator a staff member would belong to exists. */
    async operatorExists(operatorId: string): Promise<boolean> {
      const row = await db
        .selectFrom("operators")
        .select("id")
        .where("id", "=", operatorId)
        .executeTakeFirst();
      return row !== undefined;
    },

    /** Staff of one operator (superadmins are of none), or every staff member; by email. */
    async list(operatorId?: string): Promise<Staff[]> {
      let q = db.selectFrom("staff").selectAll();
      if (operatorId !== undefined) q = q.where("operator_id", "=", operatorId);
      const rows = await q.orderBy(sql`lower(email)`).orderBy("id").execute();
      return rows.map(toStaff);
    },

    /** Role and operator, as the manifest declares them. */
    async setScope(
      id: string,
      scope: { role: StaffRole; operatorId: string | null },
      at: string,
    ): Promise<void> {
      await db
        .updateTable("staff")
        .set({ role: scope.role, operator_id: scope.operatorId, updated_at: at })
        .where("id", "=", id)
        .execute();
    },

    async setPasswordHash(id: string, passwordHash: string, at: string): Promise<void> {
      await db
        .updateTable("staff")
        .set({ password_hash: passwordHash, updated_at: at })
        .where("id", "=", id)
        .execute();
    },

    /** Disables (a time) or enables again (null). */
    async setDisabled(id: string, disabledAt: string | null, at: string): Promise<void> {
      await db
        .updateTable("staff")
        .set({ disabled_at: disabledAt, updated_at: at })
        .where("id", "=", id)
        .execute();
    },
  };
}

export type StaffRepository = ReturnType<typeof staffRepository>;
