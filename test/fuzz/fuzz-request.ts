import fc from "fast-check";

/** A value that exists only at run time (a command id from an earlier answer), picked by index when sent. */
export type Recorded = { recorded: string; index: number };

export function isRecorded(v: unknown): v is Recorded {
  return typeof v === "object" && v !== null && "recorded" in v && "index" in v;
}

/** How the request authenticates; tokens are fetched (or forged) by the fuzz target when it is sent. */
export type Credential =
  | { kind: "none" }
  /** A bearer token of this client, or the same client's token that expired an hour ago. */
  | { kind: "token" | "expired-token"; client: string }
  /** Signed with `alg: none`, or with a key the service does not know. */
  | { kind: "alg-none" | "foreign-key"; client: string }
  /** HTTP Basic with the client's secret or a wrong one (what the token endpoint reads). */
  | { kind: "basic" | "basic-wrong-secret"; client: string }
  /** An Authorization header sent as is. */
  | { kind: "raw"; value: string };

/**
 * Changes made to a request on the wire (socket transport only): framing the HTTP parser must refuse
 * (`breaking`) or accept (HTTP/1.0, absolute-form target, chunked body).
 */
export const RAW_TWISTS = {
  none: false,
  "http-1.0": false,
  "absolute-form": false,
  chunked: false,
  "no-host": true,
  "lowercase-method": true,
  "bad-chunk-size": true,
  "content-length-and-chunked": true,
  "conflicting-content-length": true,
  "space-in-header-name": true,
  "folded-header": true,
  "nul-in-header": true,
  "raw-utf8-target": true,
  "oversized-header": true,
} as const;
export type RawTwist = keyof typeof RAW_TWISTS;

export type FuzzRequest = {
  /** What the generator meant ("valid", "mutated: …", "unknown path", …), for the report. */
  intent: string;
  transport: "inject" | "socket";
  method: string;
  /** Path pieces: sent as is, or a recorded value (percent-encoded when sent). */
  path: (string | Recorded)[];
  /** Query string without `?`, already encoded (or deliberately not). */
  query: string;
  headers: Record<string, string>;
  credential: Credential;
  body: { contentType: string | null; text: string } | null;
  twist: RawTwist;
  /** The fake clock moves this far before the request (throttles, token expiry, command deadlines). */
  advanceMs: number;
  remoteAddress: string;
};

const SHOWN = 300;

function clip(s: string): string {
  return s.length <= SHOWN ? JSON.stringify(s) : `${JSON.stringify(s.slice(0, SHOWN))}…(${s.length} chars)`;
}

export function pathTemplateOf(req: FuzzRequest): string {
  return req.path.map((p) => (typeof p === "string" ? p : `{${p.recorded}#${p.index}}`)).join("");
}

/** One line per field, long bodies clipped: fast-check prints this for a counterexample. */
export function describeRequest(req: FuzzRequest): string {
  const cred = req.credential;
  const credential =
    cred.kind === "raw"
      ? `raw ${clip(cred.value)}`
      : "client" in cred
        ? `${cred.kind} ${cred.client}`
        : cred.kind;
  const lines = [
    `${req.method} ${clip(pathTemplateOf(req) + (req.query ? `?${req.query}` : ""))} via ${req.transport}${req.twist === "none" ? "" : ` (${req.twist})`}`,
    `  intent: ${req.intent}`,
    `  credential: ${credential}`,
  ];
  for (const [k, v] of Object.entries(req.headers)) lines.push(`  header ${k}: ${clip(v)}`);
  if (req.body) lines.push(`  body (${req.body.contentType ?? "no content type"}): ${clip(req.body.text)}`);
  if (req.advanceMs) lines.push(`  clock +${req.advanceMs} ms`);
  lines.push(`  from ${req.remoteAddress}`);
  return lines.join("\n");
}

/** Gives the request a readable form in fast-check's counterexample report. */
export function printable(req: FuzzRequest): FuzzRequest {
  return Object.defineProperty(req, fc.toStringMethod, {
    value: () => describeRequest(req),
    enumerable: false,
  });
}
