import { z } from "zod";
import { AppError, type ErrorCode } from "../../shared/api/errors.ts";
import { REFRESH_TOKEN_MAX_LENGTH, REFRESH_TOKEN_MIN_LENGTH } from "./refresh-tokens.ts";

/**
 * The external-user request bodies, read field by field so each problem answers the spec's own code
 * (spec: External-user errors). A field of another type counts as missing; unknown fields are ignored, as
 * clients of the original service send their own.
 */

export const USER_ID_MAX_LENGTH = 255;
export const CHALLENGE_TOKEN_MAX_LENGTH = 4096;

export type SignUpInput = { operatorId: string; userId: string };
export type SignInInput = { operatorId: string; serviceUserId: string; challengeToken: string };
export type RefreshInput = { serviceUserId: string; refreshToken: string; operatorId?: string };

const uuid = z.uuid();

function field(body: unknown, name: string): string | undefined {
  if (typeof body !== "object" || body === null || Array.isArray(body)) return undefined;
  const v = (body as Record<string, unknown>)[name];
  return typeof v === "string" ? v : undefined;
}

const blank = (s: string | undefined): s is undefined => s === undefined || s.trim() === "";

/** A UUID in lower case, or null. */
function asUuid(s: string | undefined): string | null {
  return s !== undefined && uuid.safeParse(s).success ? s.toLowerCase() : null;
}

/**
 * `service_user_id`, or `bikeep_user_id` (the original service's name, which its clients send). Both
 * may be sent; then they must be the same id.
 */
function serviceUserId(body: unknown, code: ErrorCode): string {
  const given = ["service_user_id", "bikeep_user_id"]
    .map((name) => field(body, name))
    .filter((v): v is string => v !== undefined);
  const ids = given.map(asUuid);
  const first = ids[0];
  if (first === undefined) throw new AppError(code, "service_user_id is required (a UUID)");
  if (ids.some((id) => id === null)) throw new AppError(code, "service_user_id must be a UUID");
  if (ids.some((id) => id !== first))
    throw new AppError(code, "service_user_id and bikeep_user_id name different users");
  return first as string;
}

export function parseSignUp(body: unknown): SignUpInput {
  const operatorId = field(body, "operator_id");
  const userId = field(body, "user_id");
  if (blank(operatorId)) throw new AppError("ERRORS.MISSING_OPERATOR_ID", "operator_id is required");
  if (blank(userId)) throw new AppError("ERRORS.MISSING_USER_ID", "user_id is required");
  const op = asUuid(operatorId);
  // Sign-up's table has no code for a malformed operator_id; sign-in's says it (docs/decisions/external-users.md).
  if (!op) throw new AppError("ERRORS.INVALID_OPERATOR_ID", "operator_id must be a UUID");
  if (userId.length > USER_ID_MAX_LENGTH)
    throw new AppError("ERRORS.FAILED_TO_SIGN_UP", `user_id is longer than ${USER_ID_MAX_LENGTH} characters`);
  return { operatorId: op, userId };
}

export function parseSignIn(body: unknown): SignInInput {
  const operatorId = asUuid(field(body, "operator_id"));
  if (!operatorId) throw new AppError("ERRORS.INVALID_OPERATOR_ID", "operator_id must be a UUID");
  const id = serviceUserId(body, "ERRORS.INVALID_BIKEEP_USER_ID");
  const challengeToken = field(body, "challenge_token");
  if (blank(challengeToken))
    throw new AppError("ERRORS.INVALID_CHALLENGE_TOKEN", "challenge_token must not be empty");
  if (challengeToken.length > CHALLENGE_TOKEN_MAX_LENGTH)
    throw new AppError(
      "ERRORS.INVALID_CHALLENGE_TOKEN",
      `challenge_token is longer than ${CHALLENGE_TOKEN_MAX_LENGTH} characters`,
    );
  return { operatorId, serviceUserId: id, challengeToken };
}

export function parseRefresh(body: unknown): RefreshInput {
  const token = field(body, "refresh_token");
  if (blank(token) || token.length < REFRESH_TOKEN_MIN_LENGTH)
    throw new AppError("ERRORS.INVALID_REFRESH_TOKEN", "refresh_token is empty or too short");
  if (token.length > REFRESH_TOKEN_MAX_LENGTH)
    throw new AppError("ERRORS.INVALID_REFRESH_TOKEN", "refresh_token is too long");
  // Refresh's table has no code for a bad id: such a user is not found (docs/decisions/external-users.md).
  const id = serviceUserId(body, "ERRORS.AUTHENTICATION_FAILED");
  // Optional, "for debugging only": when given it must be the user's operator; blank counts as absent.
  const given = field(body, "operator_id");
  const operatorId = blank(given) ? undefined : (asUuid(given) ?? given);
  return { serviceUserId: id, refreshToken: token, ...(operatorId !== undefined ? { operatorId } : {}) };
}
