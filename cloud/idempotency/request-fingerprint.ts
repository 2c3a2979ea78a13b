import { createHash } from "node:crypto";

/**
 * JSON with the keys of every object sorted, so `{"a":1,"b":2}` and `{"b":2,"a":1}` read as one request.
 * Written with an explicit stack rather than recursion: a body is hashed before validation, and a JSON
 * body nested some thousands deep (well under the size limit) overflowed the call stack (500).
 */
export function canonicalJson(value: unknown): string {
  const out: string[] = [];
  // Work items, taken from the end: a value still to write, or text (brackets, commas, keys).
  const work: ({ value: unknown } | string)[] = [{ value }];
  for (let item = work.pop(); item !== undefined; item = work.pop()) {
    if (typeof item === "string") {
      out.push(item);
      continue;
    }
    const v = item.value;
    // Pushed in reverse, so the opening bracket is taken first (no spread: an array may be very long).
    if (Array.isArray(v)) {
      work.push("]");
      for (let i = v.length - 1; i >= 0; i--) {
        work.push({ value: v[i] });
        if (i > 0) work.push(",");
      }
      work.push("[");
    } else if (v !== null && typeof v === "object") {
      const obj = v as Record<string, unknown>;
      // As JSON.stringify: members without a JSON form (undefined, functions) are left out of objects.
      const keys = memberOrder(
        Object.keys(obj).filter((k) => typeof obj[k] === "object" || JSON.stringify(obj[k]) !== undefined),
      );
      work.push("}");
      for (let i = keys.length - 1; i >= 0; i--) {
        const k = keys[i] as string;
        work.push({ value: obj[k] }, `${i > 0 ? "," : ""}${JSON.stringify(k)}:`);
      }
      work.push("{");
    } else {
      // In an array (or alone) a value without a JSON form is null, as JSON.stringify writes it.
      out.push(JSON.stringify(v) ?? "null");
    }
  }
  return out.join("");
}

const ARRAY_INDEX = /^(0|[1-9]\d{0,9})$/;

/**
 * Sorted keys in the order an object built from them lists them: array-index keys ("0", "12") first in
 * numeric order, then the rest as sorted. This keeps fingerprints equal to those already stored.
 */
function memberOrder(keys: string[]): string[] {
  const isIndex = (k: string) => ARRAY_INDEX.test(k) && Number(k) < 2 ** 32 - 1;
  const indices = keys.filter(isIndex).sort((a, b) => Number(a) - Number(b));
  return [...indices, ...keys.filter((k) => !isIndex(k)).sort()];
}

/** What makes two requests "the same" for an Idempotency-Key: method, route, its parameters and the body. */
export type RequestParts = {
  method: string;
  route: string;
  params: unknown;
  query: unknown;
  body: unknown;
};

/** SHA-256 of the canonical request: stored instead of the body, enough to tell a different request. */
export function requestFingerprint(parts: RequestParts): string {
  const { method, route, params, query, body } = parts;
  return createHash("sha256")
    .update(canonicalJson({ method, route, params: params ?? {}, query: query ?? {}, body: body ?? null }))
    .digest("hex");
}
