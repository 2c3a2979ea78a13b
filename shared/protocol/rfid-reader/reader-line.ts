import { normaliseCardId } from "../../domain/card-id.ts";

/**
 * RFID reader protocol (docs/hardware-protocol.md): ASCII lines at 9600 8N1, CR LF terminated.
 *   HELLO <model> <firmware>   on power-up
 *   TAG <uid>                  one line per tap; uid in hex, any case, ':' or '-' separators allowed
 *   ALIVE                      every 5 s while idle
 */
export const READER_BAUD_RATE = 9600;
export const READER_ALIVE_INTERVAL_MS = 5_000;

export type ReaderLine =
  | { kind: "hello"; model: string; firmware: string }
  | { kind: "tap"; card: string }
  | { kind: "alive" }
  | { kind: "garbage"; line: string };

export function parseReaderLine(raw: string): ReaderLine {
  const line = raw.replace(/[\r\n]+$/, "").trim();
  const [word, ...rest] = line.split(/\s+/);
  switch (word) {
    case "TAG": {
      const card = rest.length === 1 ? normaliseCardId(rest[0] as string) : null;
      return card ? { kind: "tap", card } : { kind: "garbage", line };
    }
    case "HELLO":
      return rest.length === 2
        ? { kind: "hello", model: rest[0] as string, firmware: rest[1] as string }
        : { kind: "garbage", line };
    case "ALIVE":
      return rest.length === 0 ? { kind: "alive" } : { kind: "garbage", line };
    default:
      return { kind: "garbage", line };
  }
}

export function readerLine(l: Exclude<ReaderLine, { kind: "garbage" }>): string {
  switch (l.kind) {
    case "tap":
      return `TAG ${l.card.toUpperCase()}\r\n`;
    case "hello":
      return `HELLO ${l.model} ${l.firmware}\r\n`;
    case "alive":
      return "ALIVE\r\n";
  }
}
