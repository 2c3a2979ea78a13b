import { statfsSync } from "node:fs";
import type { Logger } from "pino";
import type { Outbox, Pending } from "../ports.ts";

/** What a command the gateway could not record ends with (docs/faults.md: a full state disk). */
export const STORE_FULL_REASON =
  "the gateway's state store is full (SQLITE_FULL): the command was not recorded and not executed";
/** An access decision's reason for a tap the gateway could not journal: refused, nothing moved. */
export const STORE_FULL_TAP = "store_full";
/** What the log says of an event the hardware reported that the full store could not keep. */
export const STORE_FULL_EVENT = "event not recorded: the gateway's state store is full (SQLITE_FULL)";

/** Below this much free space in the state directory the store counts as full (SQLite needs room to commit). */
const FREE_FLOOR_BYTES = 1024 * 1024;
/** Refusals kept in memory while nothing can be written; beyond this the oldest are only logged. */
const MAX_DEFERRED = 200;

export const isStoreFull = (err: unknown): boolean =>
  (err as { code?: unknown } | null)?.code === "SQLITE_FULL";

/**
 * Writes a report of what the hardware did; a full store loses the report (logged with `where`), never
 * what follows from the event: each report of one event is kept or lost on its own.
 */
export function keepReport(log: Logger, where: object, report: string, write: () => unknown): void {
  try {
    write();
  } catch (err) {
    if (!isStoreFull(err)) throw err;
    log.error({ ...where, report }, STORE_FULL_EVENT);
  }
}

export type StorageState = { free_bytes: number; full: boolean };

/**
 * The state disk as the gateway sees it: free space (told in every heartbeat, so the cloud raises its
 * storage alarm while nothing can be journaled) and the refusals it owes the cloud. A command or tap the
 * store could not record is refused before anything moves; its report cannot go through the outbox then,
 * so it waits here (memory only) and is journaled as soon as a write succeeds again.
 */
export function createStoreSpace(deps: {
  stateDir: string;
  outbox: Pick<Outbox, "append">;
  log: Logger;
  /** What else the full store refused, tried again after the owed refusals (the sensors' untold readings). */
  retry?: () => void;
}) {
  const owed: Pending[] = [];
  /** Set by a SQLITE_FULL, cleared by the next successful write. */
  let failed = false;
  let flushing = false;

  function freeBytes(): number {
    try {
      const s = statfsSync(deps.stateDir);
      return s.bavail * s.bsize;
    } catch {
      return 0;
    }
  }

  function owe(report: Pending, what: object, msg: string): void {
    failed = true;
    deps.log.error({ ...what }, msg);
    if (owed.length >= MAX_DEFERRED) deps.log.warn({ dropped: owed.shift() }, "owed report dropped");
    owed.push(report);
  }

  /** Journals what is owed, oldest first; stops at the first write the disk still refuses. */
  function flush(): void {
    // Its own appends ask for what is owed first: they are it.
    if (flushing) return;
    flushing = true;
    try {
      journalOwed();
    } finally {
      flushing = false;
    }
  }

  function journalOwed(): void {
    while (owed.length > 0) {
      try {
        deps.outbox.append(owed[0] as Pending);
      } catch (err) {
        if (!isStoreFull(err)) throw err;
        failed = true;
        return;
      }
      owed.shift();
      if (failed) deps.log.info({}, "state store writable again: owed refusals journaled");
      failed = false;
    }
  }

  return {
    /** A write failed with SQLITE_FULL before anything moved: `report` goes up once it can be journaled. */
    refused(report: Pending, what: object): void {
      owe(report, what, "refused: the gateway's state store is full (SQLITE_FULL)");
    },
    /**
     * The hardware did something the full store could not record (a command's outcome): `report` goes up
     * once it can be journaled, so the cloud learns where the latch went.
     */
    unrecorded(report: Pending, what: object): void {
      owe(report, what, "done but not recorded: the gateway's state store is full (SQLITE_FULL)");
    },
    /** Whether a refusal of this command is still owed: delivered again meanwhile, it is not run. */
    refusing(commandId: string): boolean {
      return owed.some((r) => r.type === "command_progress" && r.command_id === commandId);
    },
    /** Tries what is owed, then tells where the disk stands (the heartbeat's `storage`). */
    state(): StorageState {
      flush();
      deps.retry?.();
      const free = freeBytes();
      return { free_bytes: free, full: failed || free < FREE_FLOOR_BYTES };
    },
    owed: () => owed.length,
    /** Journals what is owed, oldest first, as far as the disk lets it (before any later write). */
    flush,
  };
}

export type StoreSpace = ReturnType<typeof createStoreSpace>;
