import fc from "fast-check";
import {
  type Credential,
  type FuzzRequest,
  isRecorded,
  printable,
  RAW_TWISTS,
  type RawTwist,
  type Recorded,
} from "./fuzz-request.ts";
import {
  anyJson,
  badIdempotencyKey,
  correlationId,
  garbageAuthorization,
  hostileKey,
  hostileText,
  junkBodyText,
  otherContentType,
  rawPathSegment,
} from "./hostile-values.ts";
import {
  type JsonSchema,
  type OpenApiDocument,
  type Operation,
  resolveSchema,
} from "./openapi-operations.ts";
import { type Hints, valueArbitrary } from "./schema-arbitrary.ts";

export type GeneratorContext = {
  doc: OpenApiDocument;
  operations: Operation[];
  /** Known values by parameter or property name (fixture ids of both tenants, recorded command ids). */
  hints: Hints;
  /** API clients whose tokens (and forgeries of them) the requests carry. */
  clients: string[];
  /** Share of requests sent over a real socket rather than app.inject (0–1). */
  socketShare: number;
};

/** A request before it is put into bytes: mutations edit this. */
type Draft = {
  op: Operation;
  /** Path parameter values: percent-encoded text, text sent raw, or a recorded value. */
  params: Record<string, string | Recorded>;
  query: [string, string][];
  /** Replaces `query` when set: a query string sent exactly as is. */
  rawQuery?: string;
  headers: Record<string, string>;
  body: { value: unknown } | { text: string } | null;
  contentType: string | null;
  mutations: string[];
  /** Replaces the operation's path (unknown paths), sent as is. */
  rawPath?: string;
};

const FORM = "application/x-www-form-urlencoded";
const OTHER_METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "HEAD", "TRACE", "PROPFIND"];

function serialiseBody(value: unknown, contentType: string): string {
  if (contentType === FORM && typeof value === "object" && value !== null && !Array.isArray(value)) {
    const form = new URLSearchParams();
    for (const [k, v] of Object.entries(value)) form.append(k, typeof v === "string" ? v : JSON.stringify(v));
    return form.toString();
  }
  return JSON.stringify(value) ?? "";
}

/** encodeURIComponent, except that a lone surrogate (which it refuses) becomes its WTF-8 bytes. */
export function encodeComponent(s: string): string {
  let out = "";
  for (const ch of s) {
    const cp = ch.codePointAt(0) ?? 0;
    if (cp >= 0xd800 && cp <= 0xdfff) {
      const bytes = [0xe0 | (cp >> 12), 0x80 | ((cp >> 6) & 0x3f), 0x80 | (cp & 0x3f)];
      out += bytes.map((b) => `%${b.toString(16).toUpperCase()}`).join("");
    } else out += encodeURIComponent(ch);
  }
  return out;
}

function encodeQuery(pairs: [string, string][]): string {
  return pairs.map(([k, v]) => `${encodeComponent(k)}=${encodeComponent(v)}`).join("&");
}

function asText(v: unknown): string {
  return typeof v === "string" ? v : JSON.stringify(v);
}

/** Query values as the document allows them: a string, or (for an array schema) repeated keys. */
function queryPairs(name: string, value: unknown): [string, string][] {
  return Array.isArray(value) ? value.map((v) => [name, asText(v)]) : [[name, asText(value)]];
}

function bodySchema(doc: OpenApiDocument, op: Operation): JsonSchema | null {
  return op.body ? resolveSchema(doc, op.body.schema) : null;
}

function propertiesOf(doc: OpenApiDocument, op: Operation): { names: string[]; required: string[] } {
  const schema = bodySchema(doc, op);
  return {
    names: Object.keys((schema?.properties as object | undefined) ?? {}),
    required: Array.isArray(schema?.required) ? (schema.required as string[]) : [],
  };
}

export function credentialArbitrary(clients: string[]): fc.Arbitrary<Credential> {
  const client = fc.constantFrom(...clients);
  return fc.oneof(
    { weight: 12, arbitrary: client.map((c): Credential => ({ kind: "token", client: c })) },
    { weight: 2, arbitrary: fc.constant<Credential>({ kind: "none" }) },
    {
      weight: 2,
      arbitrary: fc
        .tuple(
          fc.constantFrom("expired-token", "alg-none", "foreign-key", "basic", "basic-wrong-secret" as const),
          client,
        )
        .map(([kind, c]): Credential => ({ kind, client: c })),
    },
    { weight: 1, arbitrary: garbageAuthorization.map((value): Credential => ({ kind: "raw", value })) },
  );
}

/** A request the document calls valid: every parameter and the body drawn from their schemas. */
function validDraft(ctx: GeneratorContext, op: Operation): fc.Arbitrary<Draft> {
  const { doc, hints } = ctx;
  const path: Record<string, fc.Arbitrary<string | Recorded>> = {};
  const query: fc.Arbitrary<[string, string][]>[] = [];
  const headers: fc.Arbitrary<[string, string] | null>[] = [];
  for (const p of op.params) {
    const value = valueArbitrary(doc, p.schema, hints, p.name);
    if (p.in === "path") {
      path[p.name] = value.map((v) => (isRecorded(v) ? v : encodeComponent(asText(v))));
    } else if (p.in === "query") {
      const pairs = value.map((v) => queryPairs(p.name, v));
      query.push(p.required ? pairs : fc.option(pairs, { nil: [] as [string, string][], freq: 2 }));
    } else {
      const pair = value.map((v): [string, string] => [p.name.toLowerCase(), asText(v)]);
      headers.push(p.required ? pair : fc.option(pair, { nil: null, freq: 2 }));
    }
  }
  const body: fc.Arbitrary<Draft["body"]> = op.body
    ? valueArbitrary(doc, op.body.schema, hints).map((value) => ({ value }))
    : fc.constant(null);
  return fc
    .record({
      params: fc.record(path),
      query: fc.tuple(...query).map((qs) => qs.flat()),
      headers: fc.tuple(...headers).map((hs) => Object.fromEntries(hs.filter((h) => h !== null))),
      body,
    })
    .map(({ params, query: q, headers: hs, body: b }) => ({
      op,
      params,
      query: q,
      headers: hs,
      body: b,
      contentType: op.body?.contentTypes[0] ?? null,
      mutations: [],
    }));
}

type Mutation = { name: string; applies: (d: Draft) => boolean; apply: (d: Draft) => fc.Arbitrary<Draft> };

function withBodyValue(
  d: Draft,
  f: (v: Record<string, unknown>) => fc.Arbitrary<unknown>,
): fc.Arbitrary<Draft> {
  const value =
    d.body && "value" in d.body && typeof d.body.value === "object" && d.body.value !== null
      ? d.body.value
      : {};
  return f({ ...(value as Record<string, unknown>) }).map((v) => ({ ...d, body: { value: v } }));
}

function mutations(ctx: GeneratorContext): Mutation[] {
  const { doc } = ctx;
  const hasPathParams = (d: Draft) => Object.keys(d.params).length > 0;
  const hasBody = (d: Draft) => d.op.body !== null;
  const fieldOf = (d: Draft) => {
    const { names } = propertiesOf(doc, d.op);
    return names.length > 0 ? fc.constantFrom(...names) : fc.constant("field");
  };
  return [
    {
      name: "hostile path parameter",
      applies: hasPathParams,
      apply: (d) =>
        fc
          .tuple(
            fc.constantFrom(...Object.keys(d.params)),
            fc.oneof(hostileText.map(encodeComponent), rawPathSegment),
          )
          .map(([name, v]) => ({ ...d, params: { ...d.params, [name]: v } })),
    },
    {
      name: "unknown or repeated query parameter",
      applies: () => true,
      apply: (d) =>
        fc
          .oneof(
            fc.tuple(hostileKey, hostileText),
            fc.tuple(fc.constantFrom(...d.query.map(([k]) => k), "include", "tag"), hostileText),
            // A body field in the query (the token endpoint refuses credentials there).
            fc.tuple(fieldOf(d), hostileText),
            fc.tuple(
              fc.constantFrom("access_token", "a[b]", "a[]", "__proto__[x]", "constructor[prototype][x]"),
              fc.string(),
            ),
          )
          .map((pair) => ({ ...d, query: [...d.query, pair as [string, string]] })),
    },
    {
      name: "junk query string",
      applies: () => true,
      apply: (d) =>
        fc
          .oneof(
            fc.constantFrom(
              "%zz",
              "%",
              "&&&",
              "==",
              "a=%00",
              "a=%ff%fe",
              "tag=%E2%80%AE",
              "include=%",
              "?",
              "#x",
            ),
            fc.integer({ min: 1_000, max: 20_000 }).map((n) => `tag=${"t".repeat(n)}`),
            fc
              .integer({ min: 100, max: 1_000 })
              .map((n) => Array.from({ length: n }, (_, i) => `tag=${i}`).join("&")),
          )
          .map((rawQuery) => ({ ...d, rawQuery })),
    },
    {
      name: "field of the wrong type",
      applies: hasBody,
      apply: (d) =>
        fc
          .tuple(fieldOf(d), anyJson)
          .chain(([field, v]) => withBodyValue(d, (o) => fc.constant({ ...o, [field]: v }))),
    },
    {
      name: "extra field",
      applies: hasBody,
      apply: (d) =>
        fc
          .tuple(hostileKey, anyJson)
          .chain(([k, v]) => withBodyValue(d, (o) => fc.constant({ ...o, [k]: v }))),
    },
    {
      name: "required field missing",
      applies: (d) => propertiesOf(doc, d.op).required.length > 0,
      apply: (d) =>
        fc.constantFrom(...propertiesOf(doc, d.op).required).chain((k) =>
          withBodyValue(d, (o) => {
            delete o[k];
            return fc.constant(o);
          }),
        ),
    },
    {
      name: "huge string field",
      applies: hasBody,
      apply: (d) =>
        fc
          .tuple(
            fieldOf(d),
            fc.integer({ min: 1_000, max: 60_000 }),
            fc.constantFrom("x", "é", "\u0000", "\ud83d\udca9"),
          )
          .chain(([field, n, c]) =>
            withBodyValue(d, (o) => fc.constant({ ...o, [field]: c.repeat(Math.floor(n / c.length)) })),
          ),
    },
    {
      name: "deep nesting",
      applies: hasBody,
      apply: (d) =>
        fc
          .tuple(fieldOf(d), fc.integer({ min: 10, max: 30_000 }), fc.boolean())
          .map(([field, depth, arrays]) => {
            const inner = arrays
              ? `${"[".repeat(depth)}${"]".repeat(depth)}`
              : `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`;
            return { ...d, body: { text: `{${JSON.stringify(field)}:${inner}}` } };
          }),
    },
    {
      name: "not JSON (or not the documented form)",
      applies: () => true,
      apply: (d) =>
        junkBodyText.map((text) => ({
          ...d,
          body: { text },
          contentType: d.contentType ?? "application/json",
        })),
    },
    {
      name: "top-level value of another type",
      applies: hasBody,
      apply: (d) => anyJson.map((value) => ({ ...d, body: { value } })),
    },
    {
      name: "other content type",
      applies: () => true,
      apply: (d) =>
        otherContentType.map((contentType) => ({ ...d, contentType, body: d.body ?? { value: {} } })),
    },
    {
      name: "body over the size limit",
      applies: () => true,
      apply: (d) =>
        fc.tuple(fieldOf(d), fc.integer({ min: 8_200, max: 300_000 })).map(([field, n]) => ({
          ...d,
          body: { text: JSON.stringify({ [field]: "x".repeat(n) }) },
          contentType: d.contentType ?? "application/json",
        })),
    },
    {
      name: "no body",
      applies: hasBody,
      apply: (d) =>
        fc.constantFrom(null, d.contentType).map((contentType) => ({ ...d, body: null, contentType })),
    },
    {
      name: "malformed Idempotency-Key",
      applies: (d) => d.op.params.some((p) => p.in === "header" && /idempotency/i.test(p.name)),
      apply: (d) => badIdempotencyKey.map((k) => ({ ...d, headers: { ...d.headers, "idempotency-key": k } })),
    },
    {
      name: "odd header",
      applies: () => true,
      apply: (d) =>
        fc
          .constantFrom<[string, string]>(
            ["content-encoding", "gzip"],
            ["content-encoding", "identity"],
            ["accept", "text/html"],
            ["accept", "application/xml"],
            ["accept-encoding", "br, gzip"],
            ["x-forwarded-for", "1.2.3.4, 5.6.7.8"],
            ["x-http-method-override", "DELETE"],
            ["expect", "100-continue"],
            ["range", "bytes=0-1"],
            ["if-none-match", "*"],
          )
          .map(([k, v]) => ({ ...d, headers: { ...d.headers, [k]: v } })),
    },
  ];
}

function mutatedDraft(ctx: GeneratorContext, op: Operation): fc.Arbitrary<Draft> {
  const all = mutations(ctx);
  return validDraft(ctx, op).chain((valid) => {
    const applicable = all.filter((m) => m.applies(valid));
    return fc
      .uniqueArray(fc.constantFrom(...applicable), { minLength: 1, maxLength: 2, selector: (m) => m.name })
      .chain((chosen) =>
        chosen.reduce<fc.Arbitrary<Draft>>(
          (acc, m) =>
            acc.chain((d) => m.apply(d).map((n) => ({ ...n, mutations: [...n.mutations, m.name] }))),
          fc.constant(valid),
        ),
      );
  });
}

/** Puts a draft into the request the fuzz target sends. */
function toRequest(
  d: Draft,
  method: string,
  intent: string,
): Omit<FuzzRequest, "transport" | "twist" | "credential" | "advanceMs" | "remoteAddress"> {
  const path =
    d.rawPath !== undefined
      ? [d.rawPath]
      : d.op.path.split(/(\{[^}]+\})/).flatMap((piece): (string | Recorded)[] => {
          const name = /^\{([^}]+)\}$/.exec(piece)?.[1];
          if (name === undefined) return piece === "" ? [] : [piece];
          return [d.params[name] ?? ""];
        });
  const headers: Record<string, string> = { ...d.headers };
  let body: FuzzRequest["body"] = null;
  if (d.body) {
    const documented = d.op.body?.contentTypes[0] ?? "application/json";
    body = {
      contentType: d.contentType,
      text: "text" in d.body ? d.body.text : serialiseBody(d.body.value, documented),
    };
  }
  return { intent, method, path, query: d.rawQuery ?? encodeQuery(d.query), headers, body };
}

/** A path no operation has: random, one edit away from a documented one, or under the served extras. */
function unknownPath(ctx: GeneratorContext): fc.Arbitrary<string> {
  const templates = ctx.operations.map((o) =>
    o.path.replace(/\{[^}]+\}/g, "00000000-0000-4000-8000-000000000000"),
  );
  const segment = fc.oneof(fc.stringMatching(/^[a-z0-9-]{1,12}$/), rawPathSegment);
  return fc.oneof(
    fc.array(segment, { minLength: 1, maxLength: 6 }).map((s) => `/${s.join("/")}`),
    fc.tuple(fc.constantFrom(...templates), segment).map(([t, s]) => `${t}/${s}`),
    fc.constantFrom(...templates).map((t) => t.toUpperCase()),
    fc.constantFrom(...templates).map((t) => t.replace(/\/v1\//, "/v2/")),
    fc.constantFrom(...templates).map((t) => `/${t}`),
    fc.constantFrom(...templates).map((t) => t.split("/").slice(0, -1).join("/") || "/"),
    // The routes the document leaves out (docs, health) and traversal out of the static files.
    fc
      .tuple(
        fc.constantFrom("/docs/static/", "/docs/", "/openapi.json/", "/livez/", "/docs/static/../"),
        rawPathSegment,
        rawPathSegment,
      )
      .map(([prefix, a, b]) => `${prefix}${a}/${b}/package.json`),
  );
}

function unroutedDraft(
  ctx: GeneratorContext,
): fc.Arbitrary<{ draft: Draft; method: string; intent: string }> {
  const [first] = ctx.operations;
  if (!first) throw new Error("the document has no operations");
  const wrongMethod = fc.constantFrom(...ctx.operations).chain((op) => {
    const onPath = new Set(ctx.operations.filter((o) => o.path === op.path).map((o) => o.method));
    const others = OTHER_METHODS.filter((m) => !onPath.has(m) && !(m === "HEAD" && onPath.has("GET")));
    return fc
      .tuple(validDraft(ctx, op), fc.constantFrom(...others), fc.boolean())
      .map(([draft, method, keepBody]) => ({
        draft: keepBody ? draft : { ...draft, body: null, contentType: null },
        method,
        intent: "wrong method",
      }));
  });
  const unknown = fc
    .tuple(
      unknownPath(ctx),
      fc.constantFrom(...OTHER_METHODS),
      fc.option(fc.oneof(junkBodyText, fc.constant("{}"))),
    )
    .map(([path, method, text]) => ({
      draft: {
        op: first,
        rawPath: path,
        params: {},
        query: [],
        headers: {},
        body: text === null ? null : { text },
        contentType: text === null ? null : "application/json",
        mutations: [],
      },
      method,
      intent: "unknown path",
    }));
  return fc.oneof(wrongMethod, unknown);
}

const TWISTS = Object.keys(RAW_TWISTS) as RawTwist[];

/**
 * Requests generated from the served OpenAPI document: valid ones, valid ones with one or two
 * mutations, and requests for paths and methods the document does not have. Each carries a credential
 * of one of the clients (both tenants), a forgery, garbage, or none; some go over a real socket with
 * framing twists the HTTP parser must refuse.
 */
export function requestArbitrary(ctx: GeneratorContext): fc.Arbitrary<FuzzRequest> {
  const op = fc.constantFrom(...ctx.operations);
  const routed = (kind: "valid" | "mutated") =>
    op
      .chain((o) => (kind === "valid" ? validDraft(ctx, o) : mutatedDraft(ctx, o)))
      .map((d) => ({
        draft: d,
        method: d.op.method,
        intent:
          kind === "valid"
            ? `valid ${d.op.method} ${d.op.path}`
            : `${d.op.method} ${d.op.path}, mutated: ${d.mutations.join(", ")}`,
      }));
  const shaped = fc.oneof(
    { weight: 4, arbitrary: routed("valid") },
    { weight: 5, arbitrary: routed("mutated") },
    { weight: 1, arbitrary: unroutedDraft(ctx) },
  );
  const socketPercent = Math.round(ctx.socketShare * 100);
  return fc
    .record({
      shaped,
      credential: credentialArbitrary(ctx.clients),
      correlation: fc.option(correlationId, { freq: 3 }),
      socket: fc.integer({ min: 1, max: 100 }).map((n) => n <= socketPercent),
      twist: fc.oneof({ weight: 3, arbitrary: fc.constant<RawTwist>("none") }, fc.constantFrom(...TWISTS)),
      // Mostly small steps, so throttles and failure limits fill within their windows; rarely hours, so
      // tokens expire and command deadlines pass.
      advanceMs: fc.oneof(
        { weight: 400, arbitrary: fc.constant(0) },
        { weight: 199, arbitrary: fc.integer({ min: 1, max: 200 }) },
        { weight: 1, arbitrary: fc.integer({ min: 60_000, max: 30 * 3_600_000 }) },
      ),
      // Mostly one address, so its failed token requests reach the per-address limit (429).
      remoteAddress: fc.oneof(
        { weight: 6, arbitrary: fc.constant("127.0.0.1") },
        { weight: 1, arbitrary: fc.constantFrom("10.0.0.1", "2001:db8::1") },
      ),
    })
    .map(({ shaped: s, credential, correlation, socket, twist, advanceMs, remoteAddress }) => {
      const base = toRequest(s.draft, s.method, s.intent);
      if (correlation !== null) base.headers["x-correlation-id"] = correlation;
      return printable({
        ...base,
        credential,
        transport: socket ? "socket" : "inject",
        twist: socket ? twist : "none",
        advanceMs,
        remoteAddress: socket ? "127.0.0.1" : remoteAddress,
      });
    });
}
