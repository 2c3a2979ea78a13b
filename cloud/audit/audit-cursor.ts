import { createHash } from "node:crypto";
import { z } from "zod";
import { AppError } from "../../shared/api/errors.ts";
import type { AuditCursor } from "./audit-repository.ts";

/**
 * The audit listing's opaque cursor: base64url JSON of the last entry's time and id and a fingerprint of
 * the listing (operator and filters), so a cursor reads on only the listing that gave it.
 */
const Token = z.object({ a: z.iso.datetime(), i: z.string().min(1), f: z.string() });

const fingerprint = (listing: string) =>
  createHash("sha256").update(listing).digest("base64url").slice(0, 16);

export function encodeAuditCursor(cursor: AuditCursor, listing: string): string {
  return Buffer.from(JSON.stringify({ a: cursor.at, i: cursor.id, f: fingerprint(listing) })).toString(
    "base64url",
  );
}

/** A cursor given back; anything else, or one of another listing, is a 400. */
export function decodeAuditCursor(token: string, listing: string): AuditCursor {
  const invalid = (why: string) =>
    new AppError("ERRORS.INVALID_PAGINATION_TOKEN", `cursor: ${why}`, { field: "cursor" });
  let parsed: z.infer<typeof Token>;
  try {
    parsed = Token.parse(JSON.parse(Buffer.from(token, "base64url").toString("utf8")));
  } catch {
    throw invalid("not a cursor this log gave; start again without it");
  }
  if (parsed.f !== fingerprint(listing))
    throw invalid("it was given for other filters; repeat the same filters, or start again without it");
  return { at: parsed.a, id: parsed.i };
}
