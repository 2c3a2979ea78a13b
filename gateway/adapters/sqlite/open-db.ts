import { closeSync, mkdirSync, openSync } from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { randomUuid } from "../../../shared/node/random-uuid.ts";
import { assertSqliteRuntime } from "../../../shared/node/sqlite-runtime.ts";

export type GatewayDb = Database.Database;

/** Each entry's SQL, or a function giving it when it must differ per store (a fresh random value). */
const MIGRATIONS: (string | (() => string))[] = [
  `CREATE TABLE outbox (
     seq INTEGER PRIMARY KEY AUTOINCREMENT,  -- AUTOINCREMENT: a seq is never reused, even after deletes
     type TEXT NOT NULL,
     body TEXT NOT NULL,                     -- the complete wire message, seq included
     created_at TEXT NOT NULL
   );
   CREATE TABLE command_log (
     command_id TEXT PRIMARY KEY,
     device_id TEXT NOT NULL,
     name TEXT NOT NULL,
     state TEXT NOT NULL,                    -- RECEIVED, SUCCESS, ERROR
     reason TEXT NOT NULL DEFAULT '',
     lock_state TEXT,
     received_at TEXT NOT NULL,
     finished_at TEXT
   );
   CREATE TABLE device_map (
     id INTEGER PRIMARY KEY CHECK (id = 1),
     version TEXT NOT NULL,
     body TEXT NOT NULL
   );
   CREATE TABLE local_actions (
     id INTEGER PRIMARY KEY AUTOINCREMENT,
     at TEXT NOT NULL,
     who TEXT NOT NULL,
     why TEXT NOT NULL,
     device_alias TEXT NOT NULL,
     action TEXT NOT NULL,
     result TEXT NOT NULL
   );`,
  // One booking per device, as the cloud's book command made it; local access honours it until \`until\`.
  `CREATE TABLE bookings (
     device_id TEXT PRIMARY KEY,
     holder TEXT NOT NULL,
     until TEXT NOT NULL,                    -- RFC 3339 UTC with milliseconds, so it compares as text
     command_id TEXT NOT NULL,
     booked_at TEXT NOT NULL
   );
   CREATE INDEX bookings_until ON bookings (until);`,
  // The keys_only whitelist cache (ARCHITECTURE flow 4): one row per card and whitelist, clustered by card
  // so a tap's lookup reads adjacent rows; a snapshot in parts is staged beside it and swapped in whole.
  `CREATE TABLE key_grants (
     card_id TEXT NOT NULL,
     whitelist_id TEXT NOT NULL,
     active INTEGER NOT NULL,                -- 1: ACTIVE, 0: INACTIVE
     expires_at TEXT,                        -- RFC 3339 UTC with milliseconds, so it compares as text
     master INTEGER NOT NULL,                -- is_master_key
     targets TEXT NOT NULL,                  -- JSON [location_ids, device_ids]
     PRIMARY KEY (card_id, whitelist_id)
   ) WITHOUT ROWID;
   CREATE TABLE key_staging (
     card_id TEXT NOT NULL,
     whitelist_id TEXT NOT NULL,
     active INTEGER NOT NULL,
     expires_at TEXT,
     master INTEGER NOT NULL,
     targets TEXT NOT NULL,
     PRIMARY KEY (card_id, whitelist_id)
   ) WITHOUT ROWID;
   CREATE TABLE key_staging_parts (part INTEGER PRIMARY KEY);
   CREATE TABLE key_state (
     id INTEGER PRIMARY KEY CHECK (id = 1),
     version INTEGER NOT NULL,               -- the cloud's key version this cache holds
     staging_version INTEGER,                -- the snapshot being staged, and its part count
     staging_parts INTEGER
   );
   INSERT INTO key_state (id, version) VALUES (1, 0);
   -- Lockers locked under rfid_parking, by the card that parked them (only that card retrieves them).
   CREATE TABLE parked_cards (
     device_id TEXT PRIMARY KEY,
     card_id TEXT NOT NULL,
     parked_at TEXT NOT NULL
   );
   -- Taps decided and being actuated (F2): what a crash leaves here is reported at the next start.
   CREATE TABLE pending_taps (
     id INTEGER PRIMARY KEY,
     body TEXT NOT NULL                      -- the access decision, without the actuation's outcome
   );`,
  // The outbox's identity, made once with this store: a store made again after its state was lost starts
  // its seq over at 1, and the cloud must not take those for the old store's (docs/decisions/wire.md).
  // Rows written before keep '' (they were numbered without one, and the cloud knows them so).
  () => `CREATE TABLE outbox_identity (
     id INTEGER PRIMARY KEY CHECK (id = 1),
     outbox_id TEXT NOT NULL
   );
   INSERT INTO outbox_identity (id, outbox_id) VALUES (1, '${randomUuid()}');
   ALTER TABLE outbox ADD COLUMN outbox_id TEXT NOT NULL DEFAULT '';`,
  // A row observed before the gateway knew the cloud's time: its monotonic instant and the boot that instant
  // belongs to, so a daemon restarted on the same boot still dates it on the cloud's clock (null: dated).
  `ALTER TABLE outbox ADD COLUMN observed_mono REAL;
   ALTER TABLE outbox ADD COLUMN observed_boot TEXT;`,
];

/**
 * The gateway's SQLite: WAL with synchronous=FULL, because a row here is a promise to someone (an
 * outbox event, a command taken): it must survive a power cut the moment the write returns.
 */
export function openGatewayDb(stateDir: string): GatewayDb {
  assertSqliteRuntime();
  // Owner-only: the state holds commands and outbox events. SQLite gives its -wal and -shm files the main
  // file's mode.
  mkdirSync(stateDir, { recursive: true, mode: 0o700 });
  const file = path.join(stateDir, "gateway.db");
  closeSync(openSync(file, "a", 0o600));
  const db = new Database(file);
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = FULL");
  db.pragma("busy_timeout = 5000");
  const version = db.pragma("user_version", { simple: true }) as number;
  for (let v = version; v < MIGRATIONS.length; v++) {
    db.transaction(() => {
      const m = MIGRATIONS[v] as string | (() => string);
      db.exec(typeof m === "function" ? m() : m);
      db.pragma(`user_version = ${v + 1}`);
    })();
  }
  return db;
}
