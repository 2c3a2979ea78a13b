import { EventEmitter } from "node:events";
import type { Clock, Outbox, OutboxPosition, OutboxRow, Pending } from "../../gateway/ports.ts";
import type { UpMessage } from "../../shared/wire/messages.ts";

/**
 * The gateway's Outbox port in memory, for a simulated gateway: the same numbering (seq from 1), identity,
 * order and confirm-by-ack as gateway/adapters/sqlite/outbox.ts, without SQLite. What it holds is what this gateway
 * has sent and the cloud has not yet confirmed applying.
 */
export class MemoryOutbox extends EventEmitter<{ appended: [] }> implements Outbox, OutboxPosition {
  private readonly rowsBySeq = new Map<number, UpMessage>();
  private next = 1;
  /** Every message appended since the start (the pump's publishes beyond these are resends). */
  appended = 0;

  constructor(
    private readonly gatewayId: string,
    private readonly clock: Clock,
    /** This outbox's identity on the wire; null where the wire has none (messages then carry none). */
    readonly identity: string | null,
  ) {
    super();
  }

  get id(): string {
    return this.identity ?? "";
  }

  append(msg: Pending): UpMessage {
    const observed = msg.observed_at ?? this.clock.now().toISOString();
    const full = {
      ...msg,
      gateway_id: this.gatewayId,
      ...(this.identity ? { outbox_id: this.identity } : {}),
      seq: this.next++,
      observed_at: observed,
    } as UpMessage;
    this.rowsBySeq.set(full.seq, full);
    this.appended++;
    queueMicrotask(() => this.emit("appended"));
    return full;
  }

  /** In insertion order, which is seq order. */
  pending(afterSeq = 0, limit = 100): UpMessage[] {
    const out: UpMessage[] = [];
    for (const [seq, msg] of this.rowsBySeq) {
      if (seq <= afterSeq) continue;
      out.push(msg);
      if (out.length >= limit) break;
    }
    return out;
  }

  /** An ack naming another outbox identity confirms nothing here. */
  confirm(seqs: number[], outboxId?: string): number {
    if (outboxId !== undefined && outboxId !== this.id) return 0;
    let n = 0;
    for (const s of seqs) if (this.rowsBySeq.delete(s)) n++;
    return n;
  }

  /** The oldest seq still here; none: the next one to be given. */
  unconfirmedFrom(): number {
    const first = this.rowsBySeq.keys().next();
    return first.done ? this.next : first.value;
  }

  depth(): number {
    return this.rowsBySeq.size;
  }

  stats(): { pending: number; oldest: string | null } {
    const first = this.rowsBySeq.values().next();
    return { pending: this.rowsBySeq.size, oldest: first.done ? null : first.value.observed_at };
  }

  rows(limit = 50): OutboxRow[] {
    return this.pending(0, limit).map((m) => ({ seq: m.seq, type: m.type, created_at: m.observed_at }));
  }
}
