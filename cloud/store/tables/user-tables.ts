import type { Json } from "../json-column.ts";

/** Store tables of external users (see cloud/store/schema.ts for the conventions). */
export interface ExternalUsersTable {
  /** service_user_id: the service's id of the user, a UUID */
  id: string;
  operator_id: string;
  /** The integrator's own id of the user (sign-up's user_id) */
  user_id: string;
  /** E.164, when the service has learned it (docs/decisions/external-users.md) */
  phone_number: string | null;
  created_at: string;
  /** Moved on by a revocation: access tokens of an earlier generation are refused */
  token_generation: number;
}

/** A refresh token of a rider: only its SHA-256 is kept, bound to the rider and the rider's operator. */
export interface ExternalUserRefreshTokensTable {
  id: string;
  operator_id: string;
  /** service_user_id of the rider */
  user_id: string;
  /** SHA-256 of the token, hex */
  token_hash: string;
  created_at: string;
  expires_at: string;
  last_used_at: string | null;
  /** Set by the operator (npm run operator -- revoke-rider-tokens) or when newer sign-ins push it out */
  revoked_at: string | null;
}

/** Where an operator's verification callbacks go (the site manifest's `external_users`). */
export interface ExternalUserCallbacksTable {
  operator_id: string;
  sign_up_url: string;
  sign_in_url: string;
  /** 1: callbacks may reach loopback, private and link-local addresses (local demos, tests) */
  allow_private_addresses: number;
  /** Signing secrets (`whsec_…`), newest first; two during a rotation, each signs every callback. */
  secrets: Json<string[]>;
  updated_at: string;
}

/**
 * A sign-up the operator has not accepted yet (its callback failed or went unanswered): no user, only the
 * service_user_id a repeated sign-up, or a sign-in the operator verifies, gives the user (docs/decisions/external-users.md).
 */
export interface ExternalUserSignUpsTable {
  /** The service_user_id the user will have */
  id: string;
  operator_id: string;
  user_id: string;
  created_at: string;
  /** After this it is forgotten; a later sign-up starts afresh with another id */
  expires_at: string;
}

export interface UserTables {
  external_users: ExternalUsersTable;
  external_user_refresh_tokens: ExternalUserRefreshTokensTable;
  external_user_callbacks: ExternalUserCallbacksTable;
  external_user_sign_ups: ExternalUserSignUpsTable;
}
