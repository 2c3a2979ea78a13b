import { EventEmitter } from "node:events";
import type { Statement } from "better-sqlite3";
import { randomUuid } from "../../../shared/node/random-uuid.ts";
import type { Monotonic } from "../../../shared/time/clock.ts";
import type { UpMessage } from "../../../shared/wire/messages.ts";
import type { Clock, Outbox, OutboxPosition, OutboxRow, Pending } from "../../ports.ts";
import type { GatewayDb } from "./open-db.ts";

type PendingRow = { body: string; observed_mono: number | null; observed_boot: string | null };

/**
 * The Outbox port in SQLite (ARCHITECTURE: wire principles): every up-going message that matters is
 * written here first with the next per-gateway sequence number (AUTOINCREMENT: never reused) and this
 * store's outbox identity; a row leaves only when the cloud has acknowledged applying it — not when the
 * broker took it.
 */
export class SqliteOutbox extends EventEmitter<{ appended: [] }> implements Outbox, OutboxPosition {
  /** This store's outbox identity (made with the store; a store made again gets another). */
  readonly id: string;
  private readonly insert: Statement<[string, string, string, number | null, string | null]>;
  private readonly setBody: Statement<[string, number]>;
  private readonly after: Statement<[number, number]>;
  private readonly remove: Statement<[number]>;
  private readonly removeOf: Statement<[number, string]>;
  private readonly count: Statement<[]>;
  private readonly list: Statement<[number]>;
  private readonly lowest: Statement<[]>;
  private readonly countRows: Statement<[]>;
  private readonly holds: Statement<[number]>;
  /** How many rows are here, counted once and kept since (null: count again); see depth(). */
  private held: number | null = null;
  /** Seqs appended inside a caller's transaction, which may yet have rolled back: looked up once it ended. */
  private readonly unsettled = new Set<number>();
  /** The lowest seq deleted without an fsync since the last complete checkpoint (null: none). */
  private lightFrom: number | null = null;
  /** The boot of the monotonic instants this process marks (its own when the host names none). */
  private readonly boot: string;
  /** Journals what the full store refused earlier (StoreSpace), before any later write. */
  private owed: (() => void) | null = null;
  private writingOwed = false;

  constructor(
    private readonly db: GatewayDb,
    private readonly gatewayId: string,
    private readonly clock: Clock,
    /** The cloud's clock as the gateway knows it (null before it has heard it). */
    private readonly cloudNow: () => Date | null = () => null,
    /**
     * Dates facts observed before the gateway knew the cloud's time once it does: their monotonic instant is
     * kept with the row, and `at` gives it on the cloud's clock (CloudClock.dateMono).
     */
    private readonly dating: { monotonic: Monotonic; at: (mono: number) => Date | null } | null = null,
  ) {
    super();
    this.boot = dating?.monotonic.boot ?? randomUuid();
    this.id = (db.prepare("SELECT outbox_id FROM outbox_identity").get() as { outbox_id: string }).outbox_id;
    this.insert = db.prepare(
      `INSERT INTO outbox (type, body, created_at, outbox_id, observed_mono, observed_boot)
       VALUES (?, '', ?, ?, ?, ?) RETURNING seq`,
    );
    this.setBody = db.prepare("UPDATE outbox SET body = ? WHERE seq = ?");
    this.after = db.prepare(
      "SELECT body, observed_mono, observed_boot FROM outbox WHERE seq > ? ORDER BY seq LIMIT ?",
    );
    this.remove = db.prepare("DELETE FROM outbox WHERE seq = ?");
    this.removeOf = db.prepare("DELETE FROM outbox WHERE seq = ? AND outbox_id = ?");
    this.count = db.prepare("SELECT count(*) AS n, min(created_at) AS oldest FROM outbox");
    this.countRows = db.prepare("SELECT count(*) AS n FROM outbox");
    this.holds = db.prepare("SELECT 1 FROM outbox WHERE seq = ?");
    this.list = db.prepare("SELECT seq, type, created_at FROM outbox ORDER BY seq LIMIT ?");
    // The oldest row still here; none: one past the last seq ever given (AUTOINCREMENT keeps it).
    this.lowest = db.prepare(
      `SELECT coalesce((SELECT min(seq) FROM outbox),
                       (SELECT seq + 1 FROM sqlite_sequence WHERE name = 'outbox'), 1) AS n`,
    );
  }

  /**
   * Appends a message; inside the caller's transaction when there is one, so a command-log entry and
   * its progress message commit together. Durable once the outermost commit returns.
   */
  append(msg: Pending): UpMessage {
    this.writeOwed();
    const observed = msg.observed_at ?? this.clock.now().toISOString();
    const cloudAt = msg.observed_cloud_at ?? this.cloudNow()?.toISOString();
    const mono = cloudAt || !this.dating ? null : this.dating.monotonic.nowMs();
    const boot = mono === null ? null : this.boot;
    this.settle();
    const outer = this.db.inTransaction;
    const full = this.db.transaction(() => {
      const seq = (this.insert.get(msg.type, observed, this.id, mono, boot) as { seq: number }).seq;
      const m = {
        ...msg,
        gateway_id: this.gatewayId,
        outbox_id: this.id,
        seq,
        observed_at: observed,
        ...(cloudAt ? { observed_cloud_at: cloudAt } : {}),
      } as UpMessage;
      this.setBody.run(JSON.stringify(m), seq);
      return m;
    })();
    if (outer) this.unsettled.add(full.seq);
    else if (this.held !== null) this.held++;
    queueMicrotask(() => {
      if (this.db.open) this.settle();
      this.emit("appended");
    });
    return full;
  }

  /**
   * What the full store refused and is owed to the cloud goes in before anything written after it, so the
   * cloud applies the hardware's facts in the order they happened: an unlock's outcome journaled late, after
   * a lock since, left the cloud UNLOCKED of a locked latch (found by the simulation, seed 710741).
   */
  owedFirst(flush: () => void): void {
    this.owed = flush;
  }

  /** Journals what is owed, outside a transaction only (one that rolled back would lose it). */
  writeOwed(): void {
    if (!this.owed || this.writingOwed || this.db.inTransaction) return;
    this.writingOwed = true;
    try {
      this.owed();
    } finally {
      this.writingOwed = false;
    }
  }

  /**
   * Messages after `afterSeq`, oldest first. One observed before the cloud's time was known goes dated on it
   * once it is, when its instant is of this boot; one of an earlier boot has only its wall-clock `observed_at`.
   */
  pending(afterSeq = 0, limit = 100): UpMessage[] {
    const rows = this.after.all(afterSeq, limit) as PendingRow[];
    return rows.map(({ body, observed_mono: mono, observed_boot: boot }) => {
      const m = JSON.parse(body) as UpMessage;
      const ofThisBoot = mono !== null && boot === this.boot;
      const cloudAt = m.observed_cloud_at || !ofThisBoot ? null : this.dating?.at(mono);
      return cloudAt ? { ...m, observed_cloud_at: cloudAt.toISOString() } : m;
    });
  }

  /**
   * Removes the rows the cloud confirmed, only those of `outboxId` when the ack names one ('' : rows written
   * before the store had an identity); returns how many were still here.
   *
   * Committed with synchronous=NORMAL, without an fsync: a deletion promises nothing to anyone. In WAL mode
   * it survives a crash of the process; a power cut may undo it, and then the row goes up again and the
   * cloud, which applied it, ignores the repeat (by outbox identity and seq). The next durable commit, or
   * a checkpoint, takes it to disk. Two acks a command would otherwise add two fsyncs to the daemon's one
   * thread between taking a command and its outcome (docs/decisions/commands.md). Inside a caller's
   * transaction the level cannot change: the deletion commits with that transaction.
   */
  confirm(seqs: number[], outboxId?: string): number {
    const remove = (s: number) => {
      return (outboxId === undefined ? this.remove.run(s) : this.removeOf.run(s, outboxId)).changes;
    };
    this.settle();
    const run = this.db.transaction(() => seqs.reduce((n, s) => n + remove(s), 0));
    if (this.db.inTransaction) {
      this.held = null; // the caller's transaction may yet roll it back
      return run();
    }
    this.db.pragma("synchronous = NORMAL");
    let removed = 0;
    try {
      removed = run();
    } finally {
      this.db.pragma("synchronous = FULL");
    }
    if (this.held !== null) this.held -= removed;
    if (removed > 0) for (const s of seqs) this.lightFrom = Math.min(this.lightFrom ?? s, s);
    return removed;
  }

  /**
   * How many rows are here, for every heartbeat: counted once (a scan of the table: ~0.1 s at 100,000 rows
   * on a 2-core VM, more on a small controller), then kept by append and confirm. A row appended inside a caller's transaction
   * (a command's log entry and its report) is counted once that transaction has ended and the row is found
   * by its seq: a rolled-back one is not, and its seq, given again, is not counted twice.
   */
  depth(): number {
    if (this.db.inTransaction) return (this.countRows.get() as { n: number }).n; // what it sees, not kept
    this.settle();
    this.held ??= (this.countRows.get() as { n: number }).n;
    return this.held;
  }

  /** Counts the rows appended in transactions that have ended since, those that committed. */
  private settle(): void {
    if (this.unsettled.size === 0 || this.db.inTransaction) return;
    if (this.held !== null) for (const seq of this.unsettled) if (this.holds.get(seq)) this.held++;
    this.unsettled.clear();
  }

  /**
   * Every seq below this has been confirmed and deleted: it is never sent again. The cloud forgets the seqs
   * below it a week after hearing it, so a deletion it counts must be on disk first: after confirms
   * committed without an fsync, a checkpoint syncs the WAL (and the database file); should it not
   * complete, the position stays below what those confirms deleted.
   */
  unconfirmedFrom(): number {
    if (this.lightFrom !== null && !this.db.inTransaction) {
      const [r] = this.db.pragma("wal_checkpoint(PASSIVE)") as {
        busy: number;
        log: number;
        checkpointed: number;
      }[];
      if (r && r.busy === 0 && r.checkpointed === r.log) this.lightFrom = null;
    }
    const n = (this.lowest.get() as { n: number }).n;
    return this.lightFrom === null ? n : Math.min(n, this.lightFrom);
  }

  stats(): { pending: number; oldest: string | null } {
    const row = this.count.get() as { n: number; oldest: string | null };
    return { pending: row.n, oldest: row.oldest };
  }

  rows(limit = 50): OutboxRow[] {
    return this.list.all(limit) as OutboxRow[];
  }
}
