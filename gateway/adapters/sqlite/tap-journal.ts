import type { Statement } from "better-sqlite3";
import type { AccessDraft, TapJournal } from "../../ports.ts";
import type { GatewayDb } from "./open-db.ts";

/**
 * The TapJournal port in SQLite. A decision is begun with synchronous=NORMAL: in WAL mode the commit then
 * survives a crash of the process (what F2 kills) without waiting for an fsync, which would sit between
 * the tap and the door; the outcome's commit right after the actuation is fully durable and takes this
 * row's WAL frames to disk with it.
 */
export class SqliteTapJournal implements TapJournal {
  private readonly insert: Statement<[string]>;
  private readonly remove: Statement<[number]>;
  private readonly open: Statement<[]>;

  constructor(private readonly db: GatewayDb) {
    this.insert = db.prepare("INSERT INTO pending_taps (body) VALUES (?)");
    this.remove = db.prepare("DELETE FROM pending_taps WHERE id = ?");
    this.open = db.prepare("SELECT id, body FROM pending_taps ORDER BY id");
  }

  begin(draft: AccessDraft): number {
    const body = JSON.stringify(draft);
    // The safety level cannot change inside a transaction; inside one, the row commits with it.
    if (this.db.inTransaction) return Number(this.insert.run(body).lastInsertRowid);
    this.db.pragma("synchronous = NORMAL");
    try {
      return Number(this.insert.run(body).lastInsertRowid);
    } finally {
      this.db.pragma("synchronous = FULL");
    }
  }

  end(id: number): void {
    this.remove.run(id);
  }

  unfinished(): { id: number; draft: AccessDraft }[] {
    return (this.open.all() as { id: number; body: string }[]).map((r) => ({
      id: r.id,
      draft: JSON.parse(r.body) as AccessDraft,
    }));
  }
}
