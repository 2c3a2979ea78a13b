import { EventEmitter } from "node:events";
import type { Logger } from "pino";
import type { LockBusClient } from "../../lock-bus/lock-bus-client.ts";
import type { BoardReachability, Clock, TimerHandle } from "../../ports.ts";

export type BoardHealth = {
  addr: number;
  reachable: boolean;
  last_seen: string | null;
  firmware: string | null;
  channels: number | null;
};

/**
 * Knows which boards on a bus answer: pings each one every `pollMs`. A board is reachable while it
 * answered its last ping; when every board on an open bus stops answering for `recycleAfter` rounds
 * the link is recycled (closed and reopened), since a wedged USB adapter looks exactly like that.
 * Emits `board_back` when a board answers after it was unreachable (or for the first time): whatever
 * happened to its channels meanwhile has to be read again; `board_lost` when a reachable board stops
 * answering or its line closes. A board counts as seen when it answers a ping or sends an event; both are
 * wired here, and nowhere else.
 */
export class BusMonitor
  extends EventEmitter<{ board_back: [number]; board_lost: [number] }>
  implements BoardReachability
{
  private readonly boards = new Map<number, BoardHealth>();
  private timer: TimerHandle | null = null;
  private silentRounds = 0;

  constructor(
    readonly bus: LockBusClient,
    addresses: number[],
    private readonly options: { clock: Clock; log: Logger; pollMs: number; recycleAfter?: number },
  ) {
    super();
    for (const addr of addresses)
      this.boards.set(addr, { addr, reachable: false, last_seen: null, firmware: null, channels: null });
    bus.on("event", (e) => this.seen(e.addr));
    bus.on("closed", () => {
      for (const b of this.boards.values()) this.lost(b);
    });
    bus.on("open", () => void this.poll());
  }

  private seen(addr: number): void {
    const b = this.boards.get(addr);
    if (!b) return;
    const back = !b.reachable;
    b.reachable = true;
    b.last_seen = this.options.clock.now().toISOString();
    if (back) this.emit("board_back", addr);
  }

  private lost(b: BoardHealth): void {
    if (!b.reachable) return;
    b.reachable = false;
    this.emit("board_lost", b.addr);
  }

  health(): BoardHealth[] {
    return [...this.boards.values()].map((b) => ({ ...b }));
  }

  isReachable(addr: number): boolean {
    return this.boards.get(addr)?.reachable ?? false;
  }

  /** One round of pings; also what `parkctl serial probe` runs. */
  async poll(): Promise<BoardHealth[]> {
    for (const b of this.boards.values()) {
      try {
        const reply = await this.bus.request({ kind: "ping", addr: b.addr });
        if (reply.kind === "ping_reply") {
          b.firmware = reply.firmware;
          b.channels = reply.channels;
        }
        this.seen(b.addr);
      } catch {
        if (b.reachable) this.options.log.warn({ addr: b.addr }, "lock board stopped answering");
        this.lost(b);
      }
    }
    const anyUp = [...this.boards.values()].some((b) => b.reachable);
    this.silentRounds = this.bus.isOpen && !anyUp ? this.silentRounds + 1 : 0;
    if (this.silentRounds >= (this.options.recycleAfter ?? 3)) {
      this.options.log.warn("no board answers: reopening the serial line");
      this.silentRounds = 0;
      this.bus.recycle();
    }
    return this.health();
  }

  start(): void {
    const tick = () => {
      this.timer = this.options.clock.setTimer(this.options.pollMs, () => {
        void this.poll().finally(() => {
          if (this.timer) tick();
        });
      });
    };
    tick();
  }

  stop(): void {
    if (this.timer) this.options.clock.clearTimer(this.timer);
    this.timer = null;
  }
}
