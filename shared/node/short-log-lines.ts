import type { DestinationStream } from "pino";

/**
 * Log lines on a terminal are read by a person: one short line each. Before pino-pretty renders an entry,
 * a request line becomes `POST /oauth2/token 200 (88 ms)` (its correlation id only on a 5xx, where support
 * asks for it), and an error is told by its message after the line's own, without its stack trace.
 * At LOG_LEVEL=debug or trace every field and stack is printed as logged; JSON lines are never shortened.
 */
export type LogEntry = Record<string, unknown> & { msg?: string };

export function shortenEntry(entry: LogEntry): LogEntry {
  const out: LogEntry = { ...entry };
  if (out.msg === "request" && typeof out.method === "string" && typeof out.url === "string") {
    const ms = typeof out.ms === "number" ? ` (${Math.round(out.ms)} ms)` : "";
    out.msg = `${out.method} ${out.url} ${String(out.status ?? "")}${ms}`;
    const serverError = typeof out.status === "number" && out.status >= 500;
    for (const k of ["method", "url", "status", "ms", ...(serverError ? [] : ["correlation_id"])])
      delete out[k];
  }
  for (const key of ["err", "error"]) {
    const told = errorText(out[key]);
    if (told === null) continue;
    out.msg = `${out.msg ?? ""}: ${told}`;
    delete out[key];
  }
  return out;
}

/** An error as a person reads it: its message (and code), or null when the value is no error. */
function errorText(value: unknown): string | null {
  if (typeof value === "string") return value;
  if (typeof value !== "object" || value === null) return null;
  const e = value as { message?: unknown; code?: unknown };
  if (typeof e.message !== "string") return null;
  return typeof e.code === "string" && !e.message.includes(e.code) ? `${e.message} (${e.code})` : e.message;
}

/** A pino destination that shortens each entry, then hands it to `next` (pino-pretty) as a JSON line. */
export function shortLines(next: { write(line: string): unknown }): DestinationStream {
  return {
    write(line: string) {
      let entry: LogEntry;
      try {
        entry = JSON.parse(line) as LogEntry;
      } catch {
        next.write(line);
        return;
      }
      next.write(`${JSON.stringify(shortenEntry(entry))}\n`);
    },
  };
}

/** Whether a level asks for every detail on a terminal too. */
export const wantsDetails = (level: string): boolean => level === "debug" || level === "trace";
