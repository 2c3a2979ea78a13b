import fc from "fast-check";

/**
 * Inputs that have broken HTTP services before: traversal, percent-encoding tricks, injection-shaped and
 * prototype-shaped names, overlong and non-ASCII text. Each arbitrary says whether its text is already
 * URL-safe (sent as is) or must be percent-encoded.
 */

/** Path segments sent as they are, so the router sees the encoding (or its absence) we chose. */
export const rawPathSegment: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    "",
    ".",
    "..",
    "../..",
    "..%2f..%2fetc%2fpasswd",
    "%2e%2e",
    "%2e%2e%2f%2e%2e%2f",
    "%252e%252e%252f",
    "....//",
    "..;",
    "%00",
    "%0d%0aSet-Cookie:%20x=1",
    "%",
    "%zz",
    "%e2%80%ae",
    "%c0%af",
    "%ff%fe",
    "%F0%9F%92%A9",
    "*",
    "~",
    ";x=1",
    "%20",
    "%2F",
    "a%2Fb",
  ),
  fc.string({ unit: "binary-ascii", maxLength: 20 }).map((s) => s.replace(/[/?#\s]/g, "")),
);

/** Values for a path parameter, a query value or a string field; percent-encoded when sent in a URL. */
export const hostileText: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    "null",
    "undefined",
    "NaN",
    "-1",
    "0",
    "1e309",
    "true",
    "[]",
    "{}",
    "__proto__",
    "constructor",
    "prototype",
    "hasOwnProperty",
    "' OR '1'='1",
    "'; DROP TABLE locations; --",
    '"',
    "\\",
    "\u0000",
    "\u202e",
    "\ufeff",
    "\ud800",
    "{{7*7}}",
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a log-injection probe, meant literally.
    "${jndi:ldap://x}",
    "<script>alert(1)</script>",
    "../../../../etc/passwd",
    "00000000-0000-0000-0000-000000000000",
    "ffffffff-ffff-ffff-ffff-ffffffffffff",
  ),
  fc.string({ unit: "binary", maxLength: 30 }),
  fc.string({ unit: "grapheme", maxLength: 30 }),
  // Overlong: past the router's 100-character limit for a path parameter, and far past it.
  fc.integer({ min: 101, max: 2000 }).map((n) => "a".repeat(n)),
  fc.uuid().map((u) => u.replace(/-/g, "")),
  fc.uuid().map((u) => `{${u}}`),
  fc.uuid().map((u) => `urn:uuid:${u}`),
  fc.uuid().map((u) => ` ${u} `),
  fc.uuid().map((u) => `${u}x`),
);

/** JSON values of every type, to put where a schema expects another type. */
export const anyJson: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(null, true, false, 0, -1, 1.5, 1e308, -0, "", "x", [], {}, [null], { "": null }),
  fc.jsonValue({ maxDepth: 3 }),
  hostileText,
);

/** Property names worth adding to an object: prototype keys, and names one edit away from real ones. */
export const hostileKey: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom("__proto__", "constructor", "prototype", "", " ", "toString", "$where", "id", "uri"),
  fc.string({ unit: "grapheme", minLength: 1, maxLength: 20 }),
);

/** Bodies that are not what any parser accepts cleanly. */
export const junkBodyText: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    "",
    " ",
    "{",
    "}",
    '{"a":',
    "{'a':1}",
    '{"a":1,}',
    "[1,2",
    "NaN",
    "undefined",
    '{"a":1}{"b":2}',
    '{"a":1} trailing',
    "\ufeff{}",
    '{"__proto__":{"polluted":1}}',
    '{"constructor":{"prototype":{"polluted":1}}}',
    '{"a":"\\ud800"}',
    '{"a":"\\u0000"}',
    '"just a string"',
    "null",
    "0",
    "[]",
    "grant_type=client_credentials&grant_type=client_credentials",
    "%zz=%",
    "&&&==&",
    "<xml/>",
  ),
  fc.string({ unit: "binary", maxLength: 200 }),
);

/** Content types a client might send instead of the documented one. */
export const otherContentType: fc.Arbitrary<string | null> = fc.constantFrom(
  null,
  "",
  "text/plain",
  "text/html",
  "application/xml",
  "application/octet-stream",
  "multipart/form-data; boundary=x",
  "application/x-www-form-urlencoded",
  "application/json",
  "APPLICATION/JSON",
  "application/json; charset=utf-16",
  "application/json; charset=latin1",
  "application/json;;",
  "application/merge-patch+json",
  "application/problem+json",
  "application/jsonx",
  "json",
  "*/*",
  "application/*",
  ";",
  "application/json, text/plain",
);

/** Authorization header values that are not a usable credential. */
export const garbageAuthorization: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    "",
    "Bearer",
    "Bearer ",
    "Bearer  x",
    "bearer x.y.z",
    "Basic",
    "Basic !!!",
    "Basic Og==",
    "Basic YQ==",
    "Digest username=x",
    "Bearer eyJhbGciOiJIUzI1NiJ9.e30.",
    "Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.",
    "Bearer a.b.c.d",
    "Bearer ====",
    "Negotiate YIIB",
  ),
  fc.string({ maxLength: 60 }).map((s) => `Bearer ${s}`),
  fc.string({ maxLength: 60 }),
  fc.integer({ min: 1_000, max: 12_000 }).map((n) => `Bearer ${"A".repeat(n)}`),
);

/** Correlation ids: accepted ones (1–128 of `[A-Za-z0-9._:-]`) and ones the service must replace. */
export const correlationId: fc.Arbitrary<string> = fc.oneof(
  fc.stringMatching(/^[A-Za-z0-9._:-]{1,128}$/),
  fc.constantFrom("", " ", "a b", "x".repeat(129), "<script>", "abc\tdef", "é"),
  fc.string({ maxLength: 40 }),
);

/** Idempotency keys the header schema refuses (empty, too long, not printable ASCII). */
export const badIdempotencyKey: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom("", "x".repeat(256), "clé", "tab\there", "\u007f"),
  fc.integer({ min: 256, max: 4000 }).map((n) => "k".repeat(n)),
);
