import { z } from "zod";

export const TokenResponse = z
  .object({
    access_token: z.string(),
    token_type: z.literal("Bearer"),
    expires_in: z.literal(3600),
  })
  .meta({ id: "TokenResponse" });

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
