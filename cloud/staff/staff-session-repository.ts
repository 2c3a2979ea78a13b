import type { Executor } from "../store/db.ts";
import type { StaffSessionsTable } from "../store/tables/staff-tables.ts";

export type StaffSessionRecord = {
  id: string;
  staffId: string;
  tokenHash: string;
  csrfToken: string;
  createdAt: string;
  lastSeenAt: string;
  revokedAt: string | null;
};

const toRecord = (r: StaffSessionsTable): StaffSessionRecord => ({
  id: r.id,
  staffId: r.staff_id,
  tokenHash: r.token_hash,
  csrfToken: r.csrf_token,
  createdAt: r.created_at,
  lastSeenAt: r.last_seen_at,
  revokedAt: r.revoked_at,
});

/** Console sign-ins, found by the hash of their token; revoking keeps the row. */
export function staffSessionRepository(db: Executor) {
  return {
    async insert(s: StaffSessionRecord): Promise<void> {
      await db
        .insertInto("staff_sessions")
        .values({
          id: s.id,
          staff_id: s.staffId,
          token_hash: s.tokenHash,
          csrf_token: s.csrfToken,
          created_at: s.createdAt,
          last_seen_at: s.lastSeenAt,
          revoked_at: s.revokedAt,
        })
        .execute();
    },

    /** The session with this token hash, unless revoked; its idle time is the caller's to judge. */
    async findUnrevoked(tokenHash: string): Promise<StaffSessionRecord | undefined> {
      const row = await db
        .selectFrom("staff_sessions")
        .selectAll()
        .where("token_hash", "=", tokenHash)
        .where("revoked_at", "is", null)
        .executeTakeFirst();
      return row && toRecord(row);
    },

    async ofStaff(staffId: string): Promise<StaffSessionRecord[]> {
      const rows = await db
        .selectFrom("staff_sessions")
        .selectAll()
        .where("staff_id", "=", staffId)
        .orderBy("created_at")
        .orderBy("id")
        .execute();
      return rows.map(toRecord);
    },

    async touch(id: string, at: string): Promise<void> {
      await db.updateTable("staff_sessions").set({ last_seen_at: at }).where("id", "=", id).execute();
    },

    async revoke(id: string, at: string): Promise<void> {
      await db
        .updateTable("staff_sessions")
        .set({ revoked_at: at })
        .where("id", "=", id)
        .where("revoked_at", "is", null)
        .execute();
    },

    /** Revokes every live session of a staff member; how many there were. */
    async revokeAllOf(staffId: string, at: string): Promise<number> {
      const result = await db
        .updateTable("staff_sessions")
        .set({ revoked_at: at })
        .where("staff_id", "=", staffId)
        .where("revoked_at", "is", null)
        .executeTakeFirst();
      return Number(result.numUpdatedRows);
    },
  };
}
