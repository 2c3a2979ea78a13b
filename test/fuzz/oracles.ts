import {
  type JsonSchema,
  type OpenApiDocument,
  type Operation,
  resolveSchema,
} from "./openapi-operations.ts";

/** What was sent, as the router will see it, and what came back. */
export type Exchange = {
  method: string;
  /** Request target as sent: path and query. */
  target: string;
  transport: "inject" | "socket";
  /** The framing was deliberately broken, so the HTTP parser may refuse it (400, 431). */
  broken: boolean;
  /** The `x-correlation-id` the request carried, if any. */
  sentCorrelationId: string | undefined;
  status: number;
  headers: Record<string, string | string[] | number | undefined>;
  body: string;
};

export type ViolationKind = "5xx" | "envelope" | "undocumented status" | "no answer";
export type Violation = { kind: ViolationKind; detail: string };

/** Where a request lands: a documented operation, a documented path with another method, or nowhere. */
export type Destination =
  | { kind: "operation"; op: Operation }
  | { kind: "wrong method"; path: string }
  | { kind: "unknown path" }
  /** Served but left out of the document on purpose: docs, the document itself, health (docs/decisions/http.md). */
  | { kind: "undocumented route" }
  | { kind: "undecodable" };

/** The four fields of the spec's standard error body (spec: Errors). */
export const ENVELOPE_FIELDS = ["correlation_id", "error_code", "error_message", "status_code"] as const;
/** A caller's correlation id is kept when it looks like this (docs/decisions/http.md). */
const KEPT_CORRELATION_ID = /^[A-Za-z0-9._:-]{1,128}$/;
const UNDOCUMENTED_ROUTES = [/^\/docs(\/|$)/, /^\/openapi\.json$/, /^\/(livez|readyz|healthz)$/];
/** Answered before a route is chosen: a URL or request the server cannot read, or too slow, or too large. */
const BEFORE_ROUTING = [400, 408, 414, 431];

/** The URL app.inject makes of a target (light-my-request's parse-url); it throws where inject would. */
export function injectedUrl(target: string): URL {
  return new URL(target.startsWith("//") ? `http://localhost${target}` : target, "http://localhost");
}

/**
 * Resolves a request target the way the router does: dot segments are already gone for app.inject
 * (it parses the URL) but not on a socket; percent-encoding is decoded per segment; one trailing slash is
 * ignored; parameters match any single segment, even an empty one.
 */
export function destinationOf(
  operations: Operation[],
  method: string,
  target: string,
  transport: Exchange["transport"],
): Destination {
  // app.inject parses the target as light-my-request does; a socket hands it to the router as sent.
  let path =
    transport === "inject"
      ? injectedUrl(target).pathname
      : (target.replace(/^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i, "").split(/[?#]/)[0] ?? "");
  if (path.length > 1 && path.endsWith("/")) path = path.slice(0, -1);
  let segments: string[];
  try {
    segments = path.split("/").map((s) => decodeURIComponent(s));
  } catch {
    return { kind: "undecodable" };
  }
  const decoded = segments.join("/");
  if (UNDOCUMENTED_ROUTES.some((r) => r.test(decoded))) return { kind: "undocumented route" };
  const onPath = operations.filter((op) => {
    const parts = op.path.split("/");
    return (
      parts.length === segments.length && parts.every((p, i) => /^\{[^}]+\}$/.test(p) || p === segments[i])
    );
  });
  const effective = method === "HEAD" ? "GET" : method;
  const op = onPath.find((o) => o.method === effective);
  if (op) return { kind: "operation", op };
  const first = onPath[0];
  if (first) return { kind: "wrong method", path: first.path };
  return { kind: "unknown path" };
}

function headerOf(ex: Exchange, name: string): string | undefined {
  const v = ex.headers[name];
  return v === undefined ? undefined : Array.isArray(v) ? v.join(", ") : String(v);
}

/** The statuses the document (or, for paths it does not have, docs/decisions/http.md) allows. */
function allowedStatuses(dest: Destination, broken: boolean): Set<number> | "any below 500" {
  const parserRefusals = broken ? [400, 431] : [];
  switch (dest.kind) {
    case "operation":
      return new Set([...dest.op.statuses, ...parserRefusals]);
    case "wrong method":
      return new Set([405, ...BEFORE_ROUTING]);
    case "unknown path":
      return new Set([404, ...BEFORE_ROUTING]);
    case "undecodable":
      return new Set([400, 408, 431]);
    case "undocumented route":
      return "any below 500";
  }
}

/** The property sets the document allows for an error body of this status, `anyOf` unfolded. */
function documentedShapes(doc: OpenApiDocument, dest: Destination, status: number): JsonSchema[] {
  if (dest.kind !== "operation") return [];
  const schema = dest.op.responseSchemas.get(status);
  if (!schema) return [];
  const resolved = resolveSchema(doc, schema);
  const alternatives = (resolved.anyOf ?? resolved.oneOf) as JsonSchema[] | undefined;
  return (alternatives ?? [resolved]).map((s) => resolveSchema(doc, s));
}

function typeMatches(schema: JsonSchema, value: unknown): boolean {
  if (Array.isArray(schema.enum)) return (schema.enum as unknown[]).includes(value);
  if ("const" in schema) return schema.const === value;
  switch (schema.type) {
    case "string":
      return typeof value === "string";
    case "integer":
      return Number.isInteger(value);
    case "number":
      return typeof value === "number";
    default:
      return true;
  }
}

/** A non-2xx body: the four fields, consistent with the answer, and no field the document does not list. */
function envelopeProblems(doc: OpenApiDocument, dest: Destination, ex: Exchange): string[] {
  const type = headerOf(ex, "content-type") ?? "";
  if (!/^application\/json\b/.test(type)) return [`content type ${JSON.stringify(type)}, not JSON`];
  let body: unknown;
  try {
    body = JSON.parse(ex.body);
  } catch {
    return [`body is not JSON: ${ex.body.slice(0, 120)}`];
  }
  if (typeof body !== "object" || body === null || Array.isArray(body)) return ["body is not a JSON object"];
  const b = body as Record<string, unknown>;
  const problems: string[] = [];
  if (typeof b.error_message !== "string" || b.error_message === "")
    problems.push("error_message missing or empty");
  if (b.status_code !== ex.status) problems.push(`status_code ${String(b.status_code)} ≠ ${ex.status}`);
  if (typeof b.error_code !== "string" || !/^ERRORS\.[A-Z][A-Z_]*$/.test(b.error_code))
    problems.push(`error_code ${JSON.stringify(b.error_code)} is not ERRORS.<NAME>`);
  const header = headerOf(ex, "x-correlation-id");
  if (typeof b.correlation_id !== "string" || b.correlation_id === "")
    problems.push("correlation_id missing or empty");
  else if (b.correlation_id !== header)
    problems.push(`correlation_id ${b.correlation_id} ≠ x-correlation-id header ${String(header)}`);
  // The standard body has exactly the four fields; the document may allow a wider one (the OAuth error).
  const keys = Object.keys(b).sort();
  const shapes = documentedShapes(doc, dest, ex.status);
  const fits = (s: JsonSchema) => {
    const props = (s.properties ?? {}) as Record<string, JsonSchema>;
    return (
      keys.join() === Object.keys(props).sort().join() &&
      Object.entries(props).every(([k, p]) => typeMatches(resolveSchema(doc, p), b[k]))
    );
  };
  const standard = keys.join() === [...ENVELOPE_FIELDS].join();
  if (shapes.length > 0 ? !shapes.some(fits) : !standard)
    problems.push(`fields ${keys.join(", ")} are not a documented error body`);
  return problems;
}

/** The fuzz oracles: no 5xx, every error in the envelope, every status one the document lists. */
export function judge(doc: OpenApiDocument, operations: Operation[], ex: Exchange): Violation[] {
  const violations: Violation[] = [];
  const dest = destinationOf(operations, ex.method, ex.target, ex.transport);
  const where = dest.kind === "operation" ? `${dest.op.method} ${dest.op.path}` : dest.kind;
  if (ex.status >= 500) violations.push({ kind: "5xx", detail: `${ex.status} from ${where}` });
  const allowed = allowedStatuses(dest, ex.broken);
  if (allowed === "any below 500" ? ex.status >= 500 : !allowed.has(ex.status)) {
    violations.push({ kind: "undocumented status", detail: `${ex.status} is not listed for ${where}` });
  }
  const header = headerOf(ex, "x-correlation-id");
  if (!header) violations.push({ kind: "envelope", detail: "no x-correlation-id header" });
  else if (
    !ex.broken &&
    ex.sentCorrelationId !== undefined &&
    KEPT_CORRELATION_ID.test(ex.sentCorrelationId) &&
    header !== ex.sentCorrelationId
  )
    violations.push({
      kind: "envelope",
      detail: `correlation id ${ex.sentCorrelationId} not kept (got ${header})`,
    });
  const isError = ex.status >= 400;
  if (isError && ex.method !== "HEAD") {
    for (const p of envelopeProblems(doc, dest, ex)) violations.push({ kind: "envelope", detail: p });
  }
  // Before routing, a 400 means an unreadable URL or request, never a body the route would have read.
  if ((dest.kind === "unknown path" || dest.kind === "wrong method") && ex.status === 400 && !ex.broken) {
    const code = (() => {
      try {
        return (JSON.parse(ex.body) as { error_code?: unknown }).error_code;
      } catch {
        return undefined;
      }
    })();
    if (code !== "ERRORS.BAD_REQUEST")
      violations.push({
        kind: "undocumented status",
        detail: `400 ${String(code)} from ${where} (expected ${dest.kind === "unknown path" ? 404 : 405})`,
      });
  }
  if (ex.status === 405 && !headerOf(ex, "allow"))
    violations.push({ kind: "envelope", detail: "405 without Allow" });
  // A 304 is no redirect: it answers a conditional GET, and must be listed for the operation (checked above).
  const redirect = ex.status >= 300 && ex.status < 400 && ex.status !== 304;
  if (redirect && dest.kind !== "undocumented route")
    violations.push({ kind: "undocumented status", detail: `redirect ${ex.status} from ${where}` });
  if (ex.status === 304 && (!["GET", "HEAD"].includes(ex.method.toUpperCase()) || ex.body !== ""))
    violations.push({ kind: "envelope", detail: `304 to ${ex.method} ${where}, or with a body` });
  return violations;
}
