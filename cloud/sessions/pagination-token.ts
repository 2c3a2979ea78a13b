import { createHash } from "node:crypto";
import { z } from "zod";
import { AppError } from "../../shared/api/errors.ts";

/** Where a page ended: the immutable sort key (creation time) and the id that breaks its ties. */
export type Cursor = { createdAt: string; id: string };

const Token = z.object({ v: z.literal(1), c: z.iso.datetime(), i: z.uuid(), f: z.string() });

/** A fingerprint of the filters a token was made for: a token is valid only with the same filters. */
function fingerprint(filters: Record<string, unknown>): string {
  const canonical = JSON.stringify(
    Object.keys(filters)
      .sort()
      .map((k) => [k, filters[k] ?? null]),
  );
  return createHash("sha256").update(canonical).digest("base64url").slice(0, 16);
}

/** An opaque cursor: base64url JSON of the last row's key and the filters' fingerprint. */
export function encodeCursor(cursor: Cursor, filters: Record<string, unknown>): string {
  const body = { v: 1, c: cursor.createdAt, i: cursor.id, f: fingerprint(filters) };
  return Buffer.from(JSON.stringify(body)).toString("base64url");
}

/** Reads a token given back by a client; anything else, or a token of other filters, is a 400. */
export function decodeCursor(token: string, filters: Record<string, unknown>): Cursor {
  const invalid = (why: string) =>
    new AppError("ERRORS.INVALID_PAGINATION_TOKEN", `pagination_token: ${why}`, {
      field: "pagination_token",
    });
  let parsed: z.infer<typeof Token>;
  try {
    parsed = Token.parse(JSON.parse(Buffer.from(token, "base64url").toString("utf8")));
  } catch {
    throw invalid("not a token this list gave; start again without it");
  }
  if (parsed.f !== fingerprint(filters))
    throw invalid("it was given for other filters; repeat the same filters, or start again without it");
  return { createdAt: parsed.c, id: parsed.i };
}
