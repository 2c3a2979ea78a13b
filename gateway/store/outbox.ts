import { EventEmitter } from "node:events";
import type { Statement } from "better-sqlite3";
import type { UpMessage } from "../../shared/wire/messages.ts";
import type { Clock, Outbox, OutboxRow, Pending } from "../ports.ts";
import type { GatewayDb } from "./open-db.ts";

/**
 * The Outbox port in SQLite (ARCHITECTURE: wire principles): every up-going message that matters is
 * written here first with the next per-gateway sequence number (AUTOINCREMENT: never reused); a row
 * leaves only when the cloud has acknowledged applying it — not when the broker took it.
 */
export class SqliteOutbox extends EventEmitter<{ appended: [] }> implements Outbox {
  private readonly insert: Statement<[string, string]>;
  private readonly setBody: Statement<[string, number]>;
  private readonly after: Statement<[number, number]>;
  private readonly remove: Statement<[number]>;
  private readonly count: Statement<[]>;
  private readonly list: Statement<[number]>;

  constructor(
    private readonly db: GatewayDb,
    private readonly gatewayId: string,
    private readonly clock: Clock,
  ) {
    super();
    this.insert = db.prepare("INSERT INTO outbox (type, body, created_at) VALUES (?, '', ?) RETURNING seq");
    this.setBody = db.prepare("UPDATE outbox SET body = ? WHERE seq = ?");
    this.after = db.prepare("SELECT body FROM outbox WHERE seq > ? ORDER BY seq LIMIT ?");
    this.remove = db.prepare("DELETE FROM outbox WHERE seq = ?");
    this.count = db.prepare("SELECT count(*) AS n, min(created_at) AS oldest FROM outbox");
    this.list = db.prepare("SELECT seq, type, created_at FROM outbox ORDER BY seq LIMIT ?");
  }

  /**
   * Appends a message; inside the caller's transaction when there is one, so a command-log entry and
   * its progress message commit together. Durable once the outermost commit returns.
   */
  append(msg: Pending): UpMessage {
    const observed = msg.observed_at ?? this.clock.now().toISOString();
    const full = this.db.transaction(() => {
      const seq = (this.insert.get(msg.type, observed) as { seq: number }).seq;
      const m = { ...msg, gateway_id: this.gatewayId, seq, observed_at: observed } as UpMessage;
      this.setBody.run(JSON.stringify(m), seq);
      return m;
    })();
    queueMicrotask(() => this.emit("appended"));
    return full;
  }

  /** Messages after `afterSeq`, oldest first. */
  pending(afterSeq = 0, limit = 100): UpMessage[] {
    return (this.after.all(afterSeq, limit) as { body: string }[]).map(
      (r) => JSON.parse(r.body) as UpMessage,
    );
  }

  /** Removes the rows the cloud confirmed; returns how many were still here. */
  confirm(seqs: number[]): number {
    return this.db.transaction(() => seqs.reduce((n, s) => n + this.remove.run(s).changes, 0))();
  }

  stats(): { pending: number; oldest: string | null } {
    const row = this.count.get() as { n: number; oldest: string | null };
    return { pending: row.n, oldest: row.oldest };
  }

  rows(limit = 50): OutboxRow[] {
    return this.list.all(limit) as OutboxRow[];
  }
}
