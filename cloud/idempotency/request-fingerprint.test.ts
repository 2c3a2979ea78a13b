import { describe, expect, it } from "vitest";
import { canonicalJson, requestFingerprint } from "./request-fingerprint.ts";

const base = { method: "POST", route: "/things/:id", params: { id: "1" }, query: {}, body: { a: 1 } };

describe("canonicalJson", () => {
  it("sorts object keys at every level and keeps array order", () => {
    expect(canonicalJson({ b: [{ d: 1, c: 2 }, 3], a: null })).toBe('{"a":null,"b":[{"c":2,"d":1},3]}');
  });

  it("writes a missing body as null", () => {
    expect(canonicalJson(undefined)).toBe("null");
  });
});

describe("requestFingerprint", () => {
  it("is the same for bodies that differ only in key order", () => {
    expect(requestFingerprint({ ...base, body: { a: 1, b: { x: 1, y: 2 } } })).toBe(
      requestFingerprint({ ...base, body: { b: { y: 2, x: 1 }, a: 1 } }),
    );
  });

  it("differs when the body, a path parameter, the query or the method differs", () => {
    const fp = requestFingerprint(base);
    expect(requestFingerprint({ ...base, body: { a: 2 } })).not.toBe(fp);
    expect(requestFingerprint({ ...base, body: { a: "1" } })).not.toBe(fp);
    expect(requestFingerprint({ ...base, params: { id: "2" } })).not.toBe(fp);
    expect(requestFingerprint({ ...base, query: { q: "1" } })).not.toBe(fp);
    expect(requestFingerprint({ ...base, method: "PATCH" })).not.toBe(fp);
  });
});
