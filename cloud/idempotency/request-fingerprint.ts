import { createHash } from "node:crypto";

/** JSON with the keys of every object sorted, so `{"a":1,"b":2}` and `{"b":2,"a":1}` read as one request. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value)) ?? "null";
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === "object") {
    const obj = value as Record<string, unknown>;
    return Object.fromEntries(
      Object.keys(obj)
        .sort()
        .map((k) => [k, sortKeys(obj[k])]),
    );
  }
  return value;
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
