/**
 * Formatting for parkctl: aligned text tables for people, JSON with `schema_version` for machines.
 * Colour only on a terminal, and never with NO_COLOR, --no-color or TERM=dumb (https://no-color.org).
 */
import type { CheckStatus } from "../control/control-api.ts";
import type { ParkctlIo } from "./io.ts";

export const SCHEMA_VERSION = 1;

export function colorEnabled(io: ParkctlIo, flag: boolean): boolean {
  if (!flag || !io.stdout.isTTY) return false;
  const noColor = io.env.NO_COLOR;
  if (noColor !== undefined && noColor !== "") return false;
  return io.env.TERM !== "dumb";
}

const SGR = { bold: "1", dim: "2", red: "31", green: "32", yellow: "33" } as const;
export type Tone = keyof typeof SGR;

/** Writes data to stdout in the mode the run asked for. */
export class Output {
  constructor(
    private readonly io: ParkctlIo,
    readonly json: boolean,
    readonly color: boolean,
  ) {}

  paint(tone: Tone, text: string): string {
    return this.color ? `\u001b[${SGR[tone]}m${text}\u001b[0m` : text;
  }

  line(text = ""): void {
    this.io.stdout.write(`${text}\n`);
  }

  /** Machine output: one JSON document, always carrying schema_version. */
  data(payload: Record<string, unknown>): void {
    this.io.stdout.write(`${JSON.stringify({ schema_version: SCHEMA_VERSION, ...payload }, null, 2)}\n`);
  }

  table(headers: string[], rows: string[][]): void {
    for (const l of renderTable(headers, rows, (h) => this.paint("bold", h))) this.line(l);
    if (rows.length === 0) this.line(this.paint("dim", "(none)"));
  }

  /** Two aligned columns: label and value. */
  pairs(rows: [string, string][]): void {
    const w = Math.max(0, ...rows.map(([k]) => k.length));
    for (const [k, v] of rows) this.line(`${this.paint("bold", k.padEnd(w))}  ${v}`);
  }

  yesNo(v: boolean | null, good: boolean | null = true): string {
    if (v === null) return "-";
    const text = v ? "yes" : "no";
    if (good === null) return text;
    return this.paint(v === good ? "green" : "red", text);
  }

  check(status: CheckStatus): string {
    const tone: Tone = status === "pass" ? "green" : status === "warn" ? "yellow" : "red";
    return this.paint(tone, status.toUpperCase().padEnd(4));
  }
}

/** Visible width of a cell (ANSI sequences take no room). */
export function visibleLength(text: string): number {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: stripping ANSI escapes on purpose
  return text.replace(/\u001b\[[0-9;]*m/g, "").length;
}

export function renderTable(
  headers: string[],
  rows: string[][],
  head: (h: string) => string = (h) => h,
): string[] {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => visibleLength(r[i] ?? ""))));
  const pad = (cell: string, i: number) =>
    cell + " ".repeat(Math.max(0, (widths[i] ?? 0) - visibleLength(cell)));
  const lines = [headers.map((h, i) => head(pad(h, i))).join("  ")];
  for (const r of rows) lines.push(headers.map((_, i) => pad(r[i] ?? "", i)).join("  "));
  return lines.map((l) => l.trimEnd());
}

export function dash(v: string | number | null | undefined): string {
  return v === null || v === undefined || v === "" ? "-" : String(v);
}

export function duration(seconds: number | null): string {
  if (seconds === null) return "-";
  const s = Math.floor(seconds);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m ${s % 60}s`;
  if (s < 86_400) return `${Math.floor(s / 3600)}h ${Math.floor((s % 3600) / 60)}m`;
  return `${Math.floor(s / 86_400)}d ${Math.floor((s % 86_400) / 3600)}h`;
}
