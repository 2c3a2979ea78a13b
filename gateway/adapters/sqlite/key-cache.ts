import type { Statement } from "better-sqlite3";
import type { Grant } from "../../../shared/wire/messages.ts";
import type { KeyCache, KeysDelta, KeysSnapshotPart } from "../../ports.ts";
import type { GatewayDb } from "./open-db.ts";

type Row = [
  card: string,
  whitelist: string,
  active: 0 | 1,
  expiresAt: string | null,
  master: 0 | 1,
  targets: string,
];
type Stored = {
  card_id: string;
  whitelist_id: string;
  active: 0 | 1;
  expires_at: string | null;
  master: 0 | 1;
  targets: string;
};

const CANONICAL = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
/** Expiry in UTC with milliseconds, so it compares as text against the gateway's clock. */
const utc = (ts: string | null) => (ts === null || CANONICAL.test(ts) ? ts : new Date(ts).toISOString());

const rowOf = (g: Grant): Row => [
  g.card_id,
  g.whitelist_id,
  g.status === "ACTIVE" ? 1 : 0,
  utc(g.expires_at),
  g.is_master_key ? 1 : 0,
  JSON.stringify([g.location_ids, g.device_ids]),
];

const grantOf = (r: Stored): Grant => {
  const [location_ids, device_ids] = JSON.parse(r.targets) as [string[], string[]];
  return {
    card_id: r.card_id,
    whitelist_id: r.whitelist_id,
    status: r.active ? "ACTIVE" : "INACTIVE",
    expires_at: r.expires_at,
    is_master_key: r.master === 1,
    location_ids,
    device_ids,
  };
};

/** key_staging as the migration makes it, made again after each swap (the old one became key_grants). */
const STAGING_TABLE = `CREATE TABLE key_staging (
  card_id TEXT NOT NULL,
  whitelist_id TEXT NOT NULL,
  active INTEGER NOT NULL,
  expires_at TEXT,
  master INTEGER NOT NULL,
  targets TEXT NOT NULL,
  PRIMARY KEY (card_id, whitelist_id)
) WITHOUT ROWID`;

/**
 * The KeyCache port in SQLite. A delta applies only on top of the version it was made from, and a
 * snapshot replaces the cache only once all its parts are in, each in one transaction: a tap never sees
 * half a change, and a crash leaves the cache at a version the cloud knows. Statements are prepared once.
 * A snapshot's parts are written to a staging table as they arrive; the last one renames that table into
 * place, so a 100,000-card swap costs no copy of the rows. The table is clustered by (card, whitelist):
 * one card's grants are adjacent rows found through the primary key.
 */
export class SqliteKeyCache implements KeyCache {
  private readonly byCard: Statement<[string]>;
  private readonly upsert: Statement<Row>;
  private readonly remove: Statement<[string, string]>;
  private readonly stage: Statement<Row>;
  private readonly stagePart: Statement<[number]>;
  private readonly stagedParts: Statement<[]>;
  private readonly state: Statement<[]>;
  private readonly setVersion: Statement<[number]>;
  private readonly setStaging: Statement<[number | null, number | null]>;
  private readonly total: Statement<[]>;
  private readonly expired: Statement<[string]>;
  private readonly applyDeltaTx: (delta: KeysDelta) => boolean;
  private readonly stageTx: (p: KeysSnapshotPart) => "staged" | "applied";

  constructor(db: GatewayDb) {
    this.byCard = db.prepare("SELECT * FROM key_grants WHERE card_id = ? ORDER BY whitelist_id");
    this.upsert = db.prepare("INSERT OR REPLACE INTO key_grants VALUES (?, ?, ?, ?, ?, ?)");
    this.remove = db.prepare("DELETE FROM key_grants WHERE card_id = ? AND whitelist_id = ?");
    this.stage = db.prepare("INSERT OR REPLACE INTO key_staging VALUES (?, ?, ?, ?, ?, ?)");
    this.stagePart = db.prepare("INSERT OR IGNORE INTO key_staging_parts (part) VALUES (?)");
    this.stagedParts = db.prepare("SELECT count(*) AS n FROM key_staging_parts");
    this.state = db.prepare("SELECT version, staging_version, staging_parts FROM key_state WHERE id = 1");
    this.setVersion = db.prepare("UPDATE key_state SET version = ? WHERE id = 1");
    this.setStaging = db.prepare("UPDATE key_state SET staging_version = ?, staging_parts = ? WHERE id = 1");
    this.total = db.prepare("SELECT count(*) AS n FROM key_grants");
    this.expired = db.prepare("DELETE FROM key_grants WHERE expires_at IS NOT NULL AND expires_at <= ?");

    this.applyDeltaTx = db.transaction((delta: KeysDelta) => {
      if (this.read().version !== delta.base_version) return false;
      for (const k of delta.removals) this.remove.run(k.card_id, k.whitelist_id);
      for (const g of delta.upserts) this.upsert.run(...rowOf(g));
      this.setVersion.run(delta.version);
      return true;
    });

    this.stageTx = db.transaction((p: KeysSnapshotPart) => {
      const s = this.read();
      // A part of another snapshot than the one staged: that one will never be complete (the cloud has
      // moved on, or sends again from the start), so its parts go.
      if (s.staging_version !== p.version || s.staging_parts !== p.parts) {
        db.exec("DELETE FROM key_staging; DELETE FROM key_staging_parts;");
        this.setStaging.run(p.version, p.parts);
      }
      for (const g of p.grants) this.stage.run(...rowOf(g));
      this.stagePart.run(p.part);
      if ((this.stagedParts.get() as { n: number }).n < p.parts) return "staged";
      db.exec(
        `DROP TABLE key_grants;
         ALTER TABLE key_staging RENAME TO key_grants;
         ${STAGING_TABLE};
         DELETE FROM key_staging_parts;`,
      );
      this.setStaging.run(null, null);
      this.setVersion.run(p.version);
      return "applied";
    });
  }

  private read() {
    return this.state.get() as {
      version: number;
      staging_version: number | null;
      staging_parts: number | null;
    };
  }

  version(): number {
    return this.read().version;
  }

  count(): number {
    return (this.total.get() as { n: number }).n;
  }

  grantsFor(card: string): Grant[] {
    return (this.byCard.all(card) as Stored[]).map(grantOf);
  }

  applyDelta(delta: KeysDelta): boolean {
    return this.applyDeltaTx(delta);
  }

  applySnapshotPart(part: KeysSnapshotPart): "staged" | "applied" {
    if (part.part > part.parts) throw new RangeError(`snapshot part ${part.part} of ${part.parts}`);
    return this.stageTx(part);
  }

  purgeExpired(now: Date): number {
    return this.expired.run(now.toISOString()).changes;
  }
}
