import type { Monotonic } from "../../../shared/time/clock.ts";
import type { Clock, GatewayStore } from "../../ports.ts";
import { SqliteBookings } from "./bookings.ts";
import { SqliteCommandLog } from "./command-log.ts";
import { SqliteDeviceMapStore } from "./device-map-store.ts";
import { SqliteKeyCache } from "./key-cache.ts";
import { SqliteLocalActions } from "./local-actions.ts";
import { openGatewayDb } from "./open-db.ts";
import { SqliteOutbox } from "./outbox.ts";
import { SqliteParkedCards } from "./parked-cards.ts";
import { SqliteTapJournal } from "./tap-journal.ts";

/**
 * The GatewayStore port on the gateway's SQLite file in `stateDir`: its repositories, transactions, and
 * the checks parkctl doctor and the watchdog run. Nothing outside gateway/adapters/sqlite sees SQL or the
 * driver.
 */
export function openGatewayStore(
  stateDir: string,
  /** `cloudNow`: the cloud's clock as the gateway knows it, stamped on outbox messages beside its own. */
  options: {
    gatewayId: string;
    clock: Clock;
    cloudNow?: () => Date | null;
    /** Dates a monotonic instant on the cloud's clock later: facts observed before the gateway knew it. */
    dating?: { monotonic: Monotonic; at: (mono: number) => Date | null };
    /** Journals what the full store refused earlier: called before every later write (SqliteOutbox.owedFirst). */
    owedFirst?: () => void;
  },
): GatewayStore {
  const db = openGatewayDb(stateDir);
  const ping = db.prepare("SELECT 1");
  const outbox = new SqliteOutbox(db, options.gatewayId, options.clock, options.cloudNow, options.dating);
  if (options.owedFirst) outbox.owedFirst(options.owedFirst);
  return {
    outbox,
    commandLog: new SqliteCommandLog(db),
    bookings: new SqliteBookings(db),
    keys: new SqliteKeyCache(db),
    parkedCards: new SqliteParkedCards(db),
    tapJournal: new SqliteTapJournal(db),
    deviceMaps: new SqliteDeviceMapStore(db),
    localActions: new SqliteLocalActions(db),
    // better-sqlite3 turns a nested transaction into a savepoint, so callers may nest freely.
    atomically: (work) => {
      outbox.writeOwed();
      return db.transaction(work)();
    },
    checkIntegrity: () => String(db.pragma("quick_check", { simple: true })),
    isAnswering() {
      try {
        ping.get();
        return true;
      } catch {
        return false;
      }
    },
    close: () => db.close(),
  };
}
