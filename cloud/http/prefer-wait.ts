import type { FastifyReply, FastifyRequest } from "fastify";
import { z } from "zod";
import type { CommandWait } from "../commands/await-settled.ts";

/** The longest a request may ask to wait, in seconds; a longer `wait` is cut to it. */
export const MAX_WAIT_SECONDS = 30;

export const PreferHeader = z
  .string()
  .optional()
  .describe(
    "RFC 7240. `wait=N` (whole seconds, 1–30; more counts as 30) answers once the command is SUCCESS or " +
      "ERROR, or after N seconds with the command as it is then, whichever comes first — instead of " +
      "polling. The answer then carries `Preference-Applied: wait=N`. Other preferences in the header are " +
      "ignored, and so is a malformed `wait` (the request answers at once, as without the header).",
  );

/** The response header that says the wait was honoured, for the route's OpenAPI entry. */
export const PREFERENCE_APPLIED_HEADER = {
  "Preference-Applied": {
    type: "string",
    description: "`wait=N` (N as honoured, at most 30) when the request's `Prefer: wait` was applied.",
  },
} as const;

/** Splits at `sep` outside quoted strings (RFC 9110 §5.6.4: a quoted string may hold commas, semicolons). */
function splitOutsideQuotes(text: string, sep: string): string[] {
  const parts: string[] = [];
  let start = 0;
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted && c === "\\") i++;
    else if (c === '"') quoted = !quoted;
    else if (!quoted && c === sep) {
      parts.push(text.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(text.slice(start));
  return parts;
}

function unquote(word: string): string {
  if (word.length < 2 || !word.startsWith('"') || !word.endsWith('"')) return word;
  return word.slice(1, -1).replace(/\\(.)/g, "$1");
}

/**
 * The seconds a Prefer header asks to wait (RFC 7240 §4.3), cut to MAX_WAIT_SECONDS; null when it asks
 * none. `Prefer = 1#preference`, `preference = token [ BWS "=" BWS word ] *( OWS ";" [ OWS parameter ] )`:
 * only the first `wait` counts (§2), its parameters are ignored, and a value that is not 1 or more whole
 * seconds is an invalid preference, ignored like an unknown one.
 */
export function waitPreference(header: string | string[] | undefined): number | null {
  if (header === undefined) return null;
  const list = Array.isArray(header) ? header.join(",") : header;
  for (const element of splitOutsideQuotes(list, ",")) {
    const [preference = ""] = splitOutsideQuotes(element, ";");
    const eq = preference.indexOf("=");
    const name = (eq < 0 ? preference : preference.slice(0, eq)).trim().toLowerCase();
    if (name !== "wait") continue;
    const value = eq < 0 ? "" : unquote(preference.slice(eq + 1).trim());
    if (!/^\d+$/.test(value)) return null;
    const seconds = Number(value);
    return seconds < 1 ? null : Math.min(seconds, MAX_WAIT_SECONDS);
  }
  return null;
}

/**
 * What a route needs to honour `Prefer: wait`: the wait, whose signal fires if the client goes away
 * before the answer (the response closes unfinished), and the `Preference-Applied` value. Null when the
 * request asks no wait.
 */
export function requestedWait(
  request: FastifyRequest,
  reply: FastifyReply,
): { wait: CommandWait; applied: string } | null {
  const seconds = waitPreference(request.headers.prefer);
  if (seconds === null) return null;
  const gone = new AbortController();
  const res = reply.raw;
  if (res.destroyed) gone.abort();
  else
    res.once("close", () => {
      if (!res.writableEnded) gone.abort();
    });
  return { wait: { ms: seconds * 1_000, signal: gone.signal }, applied: `wait=${seconds}` };
}
