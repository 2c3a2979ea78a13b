/**
 * One error class with stable codes (spec: Errors). Callers and tests branch on `code`, never on the
 * message; each code knows its HTTP status so the cloud's error handler needs no mapping table.
 */
export const ERROR_STATUS = {
  "ERRORS.VALIDATION_FAILED": 400,
  "ERRORS.BAD_REQUEST": 400,
  "ERRORS.INVALID_TIMEOUT_AT": 400,
  "ERRORS.COMMAND_NOT_SUPPORTED": 400,
  "ERRORS.COMMAND_NOT_ALLOWED_IN_STATE": 400,
  "ERRORS.DEVICE_ASLEEP": 400,
  "ERRORS.INVALID_REQUEST": 400,
  "ERRORS.UNSUPPORTED_GRANT_TYPE": 400,
  // External-user authentication (spec: External-user errors); all 400 but OPERATOR_ERROR and SERVICE_TIMED_OUT.
  "ERRORS.MISSING_OPERATOR_ID": 400,
  "ERRORS.MISSING_USER_ID": 400,
  "ERRORS.FAILED_TO_SIGN_UP": 400,
  "ERRORS.OPERATOR_REJECTION": 400,
  "ERRORS.INVALID_OPERATOR_ID": 400,
  "ERRORS.INVALID_BIKEEP_USER_ID": 400,
  "ERRORS.INVALID_CHALLENGE_TOKEN": 400,
  "ERRORS.FAILED_TO_SIGN_IN": 400,
  "ERRORS.INVALID_REFRESH_TOKEN": 400,
  "ERRORS.AUTHENTICATION_FAILED": 400,
  "ERRORS.UNKNOWN_USER": 400,
  "ERRORS.NOT_A_MEMBER": 400,
  "ERRORS.EXTERNAL_ID_IMMUTABLE": 400,
  // Sessions: a rider at max_user_sessions of a location; a pagination_token not of this list.
  "ERRORS.MAX_USER_SESSIONS_REACHED": 400,
  "ERRORS.INVALID_PAGINATION_TOKEN": 400,
  // Whitelist batches: the answer when items failed, and the codes of its error_results.
  "ERRORS.BATCH_ITEMS_FAILED": 400,
  "ERRORS.INVALID_CARD_ID": 400,
  "ERRORS.UNKNOWN_TARGET": 400,
  "ERRORS.WHITELIST_LIMIT_REACHED": 400,
  "ERRORS.INVALID_CLIENT": 401,
  "ERRORS.UNAUTHORIZED": 401,
  "ERRORS.INVALID_TOKEN": 401,
  "ERRORS.FORBIDDEN": 403,
  "ERRORS.ACCESS_DENIED": 403,
  "ERRORS.NOT_FOUND": 404,
  "ERRORS.METHOD_NOT_ALLOWED": 405,
  "ERRORS.NOT_ACCEPTABLE": 406,
  "ERRORS.REQUEST_TIMEOUT": 408,
  "ERRORS.IDEMPOTENCY_KEY_IN_USE": 409,
  "ERRORS.PAYLOAD_TOO_LARGE": 413,
  "ERRORS.URI_TOO_LONG": 414,
  "ERRORS.UNSUPPORTED_MEDIA_TYPE": 415,
  "ERRORS.IDEMPOTENCY_KEY_REUSED": 422,
  "ERRORS.LOCK_COMMAND_THROTTLED": 429,
  "ERRORS.IDEMPOTENCY_KEY_LIMIT_REACHED": 429,
  "ERRORS.RATE_LIMITED": 429,
  "ERRORS.HEADERS_TOO_LARGE": 431,
  "ERRORS.INTERNAL": 500,
  "ERRORS.OPERATOR_ERROR": 500,
  "ERRORS.SERVICE_UNAVAILABLE": 503,
  "ERRORS.SERVICE_TIMED_OUT": 504,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;
export const ERROR_CODES = Object.keys(ERROR_STATUS) as ErrorCode[];

export class AppError extends Error {
  readonly code: ErrorCode;
  /** Evidence for logs and for the client (only safe, public facts go here). */
  readonly context: Record<string, unknown>;
  /** Extra response headers, e.g. Retry-After for 429. */
  readonly headers: Record<string, string>;

  constructor(
    code: ErrorCode,
    message: string,
    context: Record<string, unknown> = {},
    headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = "AppError";
    this.code = code;
    this.context = context;
    this.headers = headers;
  }

  get status(): number {
    return ERROR_STATUS[this.code];
  }
}

export function isAppError(e: unknown): e is AppError {
  return e instanceof AppError;
}

export function hasCode(e: unknown, code: ErrorCode): boolean {
  return isAppError(e) && e.code === code;
}
