/**
 * The one logger setup of the cloud, the gateway daemon and the demo: pino, written as aligned
 * human-readable lines when stdout is a terminal (pino-pretty; short ones unless LOG_LEVEL is debug or
 * trace) and as JSON lines otherwise (journald, a file, a log shipper). LOG_FORMAT=json|pretty overrides the guess. Card ids are masked wherever they
 * appear under a `card` key.
 */
import { createRequire } from "node:module";
import pino, { type DestinationStream, type Logger } from "pino";
import type PinoPretty from "pino-pretty";
import { maskCardId } from "../domain/card-id.ts";
import { shortLines, wantsDetails } from "./short-log-lines.ts";

/**
 * pino-pretty (and its dependencies) only when a logger is made for a terminal: a daemon logging JSON to
 * journald never loads it, which keeps its memory and start-up smaller.
 */
const loadPretty = (): typeof PinoPretty => createRequire(import.meta.url)("pino-pretty");

export const LOG_FORMATS = ["json", "pretty"] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];
export const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

type Env = Record<string, string | undefined>;
type Tty = { isTTY?: boolean };

/** A bad LOG_FORMAT names the variable, like every other start-up error. */
export class LogFormatError extends Error {}

/** LOG_FORMAT when set, else pretty on a terminal and JSON anywhere else. */
export function logFormat(env: Env = process.env, stdout: Tty = process.stdout): LogFormat {
  const v = env.LOG_FORMAT?.trim();
  if (!v) return stdout.isTTY === true ? "pretty" : "json";
  if ((LOG_FORMATS as readonly string[]).includes(v)) return v as LogFormat;
  throw new LogFormatError(`LOG_FORMAT=${v}: must be one of ${LOG_FORMATS.join(", ")}`);
}

/** Colour only on a terminal, never with NO_COLOR or TERM=dumb (https://no-color.org). */
function colour(env: Env, stdout: Tty): boolean {
  return stdout.isTTY === true && !env.NO_COLOR && env.TERM !== "dumb";
}

/** Card ids under these keys are masked to their last four digits (shared/domain/card-id.ts). */
const CARD_PATHS = ["card", "*.card", "card_id", "*.card_id"];

export type LoggerOptions = {
  level: LogLevel | string;
  /** Default: from LOG_FORMAT and whether `stdout` is a terminal. */
  format?: LogFormat;
  env?: Env;
  /** Where lines go (default: process.stdout); tests pass a stream. */
  destination?: DestinationStream & Tty;
};

export function createLogger(o: LoggerOptions): Logger {
  const env = o.env ?? process.env;
  const out = o.destination ?? process.stdout;
  const format = o.format ?? logFormat(env, out);
  const options: pino.LoggerOptions = {
    level: o.level,
    redact: {
      paths: CARD_PATHS,
      censor: (value) => (typeof value === "string" ? maskCardId(value) : value),
    },
  };
  if (format === "json") return pino(options, o.destination ?? pino.destination({ dest: 1, sync: true }));
  const pretty = loadPretty()({
    destination: out as NodeJS.WritableStream,
    sync: true,
    colorize: colour(env, out),
    singleLine: true,
    translateTime: "SYS:HH:MM:ss.l",
    // A gateway's lines lead with its id instead of repeating it among the fields.
    ignore: "pid,hostname,gateway_id",
    messageFormat: "{if gateway_id}{gateway_id}: {end}{msg}",
  });
  // Short lines for a person; every field and stack trace at debug or trace (shared/node/short-log-lines.ts).
  return pino(options, wantsDetails(String(o.level)) ? pretty : shortLines(pretty));
}
