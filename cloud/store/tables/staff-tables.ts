import type { StaffRole } from "../../../shared/domain/staff-roles.ts";

/** Store tables of the console's staff (see cloud/store/schema.ts for the conventions). */
export interface StaffTable {
  id: string;
  /** The operator whose sites the staff member sees; null for a superadmin, who sees every operator. */
  operator_id: string | null;
  /** As given; unique whatever its case (an index on lower(email)). */
  email: string;
  /** scrypt, as client secrets are hashed (cloud/auth/secrets.ts) */
  password_hash: string;
  role: StaffRole;
  disabled_at: string | null;
  created_at: string;
  updated_at: string;
}

/** A console sign-in: only the SHA-256 of the cookie's token is kept. */
export interface StaffSessionsTable {
  id: string;
  staff_id: string;
  /** SHA-256 of the session token, hex */
  token_hash: string;
  /** Sent back in the X-CSRF-Token header of every state-changing console request */
  csrf_token: string;
  created_at: string;
  /** The idle timeout counts from here; every request of the session moves it */
  last_seen_at: string;
  /** Signed out, the account disabled or its password reset, or idle too long */
  revoked_at: string | null;
}

export interface StaffTables {
  staff: StaffTable;
  staff_sessions: StaffSessionsTable;
}
