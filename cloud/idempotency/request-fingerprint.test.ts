import fc from "fast-check";
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

describe("canonicalJson against JSON.stringify of the key-sorted value", () => {
  const sorted = (v: unknown): unknown =>
    Array.isArray(v)
      ? v.map(sorted)
      : v !== null && typeof v === "object"
        ? Object.fromEntries(
            Object.keys(v)
              .sort()
              .map((k) => [k, sorted((v as Record<string, unknown>)[k])]),
          )
        : v;

  it("writes exactly what JSON.stringify writes once keys are sorted", () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 4 }), (v) => {
        expect(canonicalJson(v)).toBe(JSON.stringify(sorted(v)));
      }),
    );
    const odd = { u: undefined, f: () => 1, n: Number.NaN, a: [undefined, () => 1], d: -0 };
    expect(canonicalJson(odd)).toBe(JSON.stringify(sorted(odd)));
  });

  it("writes a body nested far deeper than the call stack allows", () => {
    const depth = 100_000;
    const nested = JSON.parse(`${"[".repeat(depth)}${"]".repeat(depth)}`) as unknown;
    expect(canonicalJson({ body: nested })).toBe(`{"body":${"[".repeat(depth)}${"]".repeat(depth)}}`);
  });

  it("writes an array too long to pass as arguments", () => {
    const wide = Array.from({ length: 300_000 }, (_, i) => i);
    expect(canonicalJson(wide)).toBe(JSON.stringify(wide));
  });
});
