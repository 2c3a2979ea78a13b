import type { RawTwist } from "./fuzz-request.ts";

export type WireRequest = {
  method: string;
  target: string;
  headers: Record<string, string>;
  body: { contentType: string | null; text: string } | null;
};

/**
 * HTTP/1.1 bytes for a request, with one framing twist. `Connection: close` makes the server end the
 * connection after answering, which is how raw-http.ts knows the answer is complete.
 */
export function toRawHttp(req: WireRequest, twist: RawTwist): Buffer {
  const body = req.body ? Buffer.from(req.body.text, "utf8") : Buffer.alloc(0);
  const method = twist === "lowercase-method" ? req.method.toLowerCase() : req.method;
  const target =
    twist === "absolute-form"
      ? `http://fuzz.test${req.target}`
      : twist === "raw-utf8-target"
        ? `${req.target}é`
        : req.target;
  const version = twist === "http-1.0" ? "HTTP/1.0" : "HTTP/1.1";
  const lines = [`${method} ${target} ${version}`];
  if (twist !== "no-host") lines.push("Host: fuzz.test");
  lines.push("Connection: close");
  for (const [k, v] of Object.entries(req.headers)) lines.push(`${k}: ${v}`);
  if (req.body?.contentType != null) lines.push(`Content-Type: ${req.body.contentType}`);

  let payload = body;
  switch (twist) {
    case "chunked":
    case "bad-chunk-size":
    case "content-length-and-chunked": {
      lines.push("Transfer-Encoding: chunked");
      if (twist === "content-length-and-chunked") lines.push(`Content-Length: ${body.length}`);
      const size = twist === "bad-chunk-size" ? "zz" : body.length.toString(16);
      payload = Buffer.concat([
        Buffer.from(body.length > 0 || twist === "bad-chunk-size" ? `${size}\r\n` : ""),
        body,
        Buffer.from(body.length > 0 || twist === "bad-chunk-size" ? "\r\n0\r\n\r\n" : "0\r\n\r\n"),
      ]);
      break;
    }
    case "conflicting-content-length":
      lines.push(`Content-Length: ${body.length}`, `Content-Length: ${body.length + 1}`);
      break;
    default:
      if (req.body) lines.push(`Content-Length: ${body.length}`);
  }
  if (twist === "space-in-header-name") lines.push("Bad Header: x");
  if (twist === "folded-header") lines.push("X-Folded: a", " b");
  if (twist === "nul-in-header") lines.push("X-Nul: a\u0000b");
  if (twist === "oversized-header") lines.push(`X-Pad: ${"a".repeat(17 * 1024)}`);
  return Buffer.concat([Buffer.from(`${lines.join("\r\n")}\r\n\r\n`, "utf8"), payload]);
}
