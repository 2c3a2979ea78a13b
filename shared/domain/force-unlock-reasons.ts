/** The spec's reasons for a force-unlock (kept free of zod, so the console's bundle can take them too). */
export const FORCE_UNLOCK_REASONS = [
  "STUCK_USER_RFID_ISSUE",
  "STUCK_USER_APP_ISSUE",
  "STUCK_USER_USER_ERROR",
  "STUCK_USER_OTHER_ISSUE",
  "LOCKED_EMPTY",
  "MAINTENANCE",
  "TESTING",
  "RENTAL_VEHICLE_LOCKED",
  "FALSE_LOCK",
  "OTHER",
] as const;

/** Reasons whose force-unlock needs a comment of at least 5 characters (spec: Limits). */
export const REASONS_NEEDING_COMMENT: ReadonlySet<string> = new Set(["STUCK_USER_OTHER_ISSUE", "OTHER"]);
