import { z } from "zod";

/**
 * External-user authentication (spec: Endpoints, External-user authentication). These schemas document
 * the bodies; the routes read them field by field so that each missing or malformed field answers the
 * spec's own error code (spec: External-user errors) rather than a generic validation failure.
 */

export const SignUpRequest = z
  .object({
    user_id: z.string().min(1).max(255).describe("The integrator's own id of the user"),
    operator_id: z.uuid().describe("The operator's id, issued by the service operator"),
  })
  .meta({ id: "SignUpRequest" });

const ServiceUserId = z.uuid().describe("The service's id of the user (`bikeep_user_id` is accepted too)");

export const SignInRequest = z
  .object({
    service_user_id: ServiceUserId,
    operator_id: z.uuid(),
    challenge_token: z
      .string()
      .min(1)
      .max(4096)
      .describe("The nonce the integrator's server will confirm in the sign-in verification callback"),
  })
  .meta({ id: "SignInRequest" });

export const SignInResponse = z
  .object({
    access_token: z.string().describe("Bearer token of the user, valid 1 hour"),
    refresh_token: z.string().describe("Reusable for new access tokens until it expires or is revoked"),
  })
  .meta({ id: "SignInResponse" });

export const RefreshRequest = z
  .object({
    service_user_id: ServiceUserId,
    refresh_token: z.string().min(32).max(512),
    operator_id: z.uuid().optional().describe("Optional; when given it must be the user's operator"),
  })
  .meta({ id: "RefreshRequest" });

export const RefreshResponse = z
  .object({ access_token: z.string().describe("Bearer token of the user, valid 1 hour") })
  .meta({ id: "RefreshResponse" });

/** What the service POSTs to the integrator's sign-up verification endpoint. */
export const SignUpCallback = z.object({
  user_id: z.string(),
  service_user_id: z.uuid(),
  /** The same id under the name the original service used. */
  bikeep_user_id: z.uuid(),
});

/** What the service POSTs to the integrator's sign-in verification endpoint. */
export const SignInCallback = z.object({ user_id: z.string(), challenge_token: z.string() });

/**
 * The sign-in verification answer: the user's service_user_id (or bikeep_user_id), and optionally the
 * user's phone number in E.164, which the service keeps for access-list invites (docs/decisions/external-users.md).
 */
export const SignInCallbackAnswer = z.object({
  service_user_id: z.string().optional(),
  bikeep_user_id: z.string().optional(),
  phone_number: z.string().nullable().optional(),
});
