/** Store tables of external users (see cloud/store/schema.ts for the conventions). */
export interface ExternalUsersTable {
  /** service_user_id: the service's id of the user, a UUID */
  id: string;
  operator_id: string;
  /** The integrator's own id of the user (sign-up's user_id) */
  user_id: string;
  /** E.164, when the service has learned it (docs/decisions.md) */
  phone_number: string | null;
  created_at: string;
}

export interface UserTables {
  external_users: ExternalUsersTable;
}
