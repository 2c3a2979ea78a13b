import type { Json } from "../store/json-column.ts";
import { fromJson, toJson } from "../store/json-column.ts";
import { ORDERED_FIELDS, type OrderedField, type ReadingMarks } from "../store/tables/reading-marks.ts";
import type { SensorReading } from "./device-repository.ts";

/**
 * Where a report sits in its gateway's outbox. `source` names one sequence: seqs compare only within it
 * (another gateway, or a gateway whose outbox began again, starts a new one).
 */
export type ReadingPosition = { source: string; seq: number };

/** The sequence a gateway's reports belong to: its outbox (a store made again numbers from 1 anew). */
export function readingSource(gatewayId: string, outboxId: string | undefined): string {
  return `${gatewayId}/${outboxId ?? ""}`;
}

export type FreshReading = {
  /** The fields no later report has set, with `sensors_at` when there is any; everything else as given. */
  fresh: SensorReading;
  /** Fields of the reading a later report has already set. */
  stale: OrderedField[];
  /** The marks to store with `fresh` (an opening moves them even when every field was stale); null when nothing moved them. */
  marks: Json<ReadingMarks> | null;
};

/**
 * Keeps a device's sensors in outbox order when reports of one gateway are applied out of it (replicas of
 * the cloud each taking some of them): a field takes a report's value only if no report later in the
 * same sequence has set it already, so the end state is the one in-order application gives.
 */
export function freshReading(
  stored: Json<ReadingMarks> | null,
  at: ReadingPosition | undefined,
  reading: SensorReading,
): FreshReading {
  const carried = ORDERED_FIELDS.filter((f) => reading[f] !== undefined);
  if (!at || carried.length === 0) return { fresh: reading, stale: [], marks: null };
  const prior = stored ? fromJson(stored) : null;
  const same = prior !== null && prior.source === at.source;
  const seqs = same ? { ...prior.seq } : {};
  // An opening is kept even when a later lock reading has overtaken it (the latch was open then).
  const wasOpened = same ? prior.opened : undefined;
  const opens = reading.lock_state === "UNLOCKED" && (wasOpened === undefined || wasOpened < at.seq);
  const opened = opens ? at.seq : wasOpened;
  const mark = (): Json<ReadingMarks> =>
    toJson<ReadingMarks>({ source: at.source, seq: seqs, ...(opened !== undefined ? { opened } : {}) });
  const fresh: SensorReading = { ...reading };
  const stale: OrderedField[] = [];
  for (const f of carried) {
    const last = seqs[f];
    if (last !== undefined && last > at.seq) {
      stale.push(f);
      delete fresh[f];
    } else seqs[f] = at.seq;
  }
  if (stale.length === carried.length) {
    delete fresh.sensors_at;
    return { fresh, stale, marks: opens ? mark() : null };
  }
  return { fresh, stale, marks: mark() };
}

/** Whether a report later than `at` in the same sequence found the latch open (applied before `at`). */
export function openedLater(stored: Json<ReadingMarks> | null, at: ReadingPosition): boolean {
  const prior = stored ? fromJson(stored) : null;
  return prior?.source === at.source && prior.opened !== undefined && prior.opened > at.seq;
}

/** Whether a report later than `at` in the same sequence has set `field` already. */
export function setLater(
  stored: Json<ReadingMarks> | null,
  at: ReadingPosition,
  field: OrderedField,
): boolean {
  const prior = stored ? fromJson(stored) : null;
  const last = prior?.source === at.source ? prior.seq[field] : undefined;
  return last !== undefined && last > at.seq;
}
