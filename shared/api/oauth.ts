import { z } from "zod";

export const TokenResponse = z
  .object({
    access_token: z.string(),
    token_type: z.literal("Bearer"),
    expires_in: z.literal(3600),
  })
  .meta({ id: "TokenResponse" });

/**
 * The token request's form fields (RFC 6749 §4.4.2). The client's credentials come here or, instead, in
 * `Authorization: Basic` (§2.3.1), never both.
 */
export const TokenRequest = z
  .object({
    grant_type: z.literal("client_credentials"),
    client_id: z.string().min(1).optional().describe("Unless sent in Authorization: Basic"),
    client_secret: z.string().min(1).optional().describe("Unless sent in Authorization: Basic"),
  })
  .meta({ id: "TokenRequest" });

/** RFC 6749 §5.2 error codes; the body also carries the spec's error fields. */
export const OAUTH_ERRORS = [
  "invalid_request",
  "invalid_client",
  "unsupported_grant_type",
  "invalid_scope",
] as const;
export const TokenError = z
  .object({
    error: z.enum(OAUTH_ERRORS),
    error_description: z.string(),
    error_message: z.string(),
    status_code: z.number(),
    correlation_id: z.string(),
    error_code: z.string(),
  })
  .meta({ id: "TokenError" });
