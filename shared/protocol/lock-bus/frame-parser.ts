import { ETX, FRAME_OVERHEAD, HEADER_LEN, MAX_PAYLOAD, STX } from "./constants.ts";
import { checksum, type Frame } from "./frame.ts";

export type Discarded = {
  bytes: Uint8Array;
  reason: "no_start" | "bad_length" | "bad_end" | "bad_checksum" | "stale_start";
};

type Attempt =
  | { kind: "valid"; total: number }
  | { kind: "invalid"; reason: Discarded["reason"] }
  | { kind: "incomplete" };

/**
 * Bytes → frames. Resynchronises after garbage: anything before a start byte is dropped, and a start
 * byte that does not open a valid frame is dropped on its own so the search resumes right after it.
 * While a candidate waits for more bytes, a complete valid frame further on wins: on a request/reply bus
 * no more bytes may come, and a noise byte must not hold a real reply hostage.
 * Reports what it discarded; never throws.
 */
export class FrameParser {
  private buf = new Uint8Array(0);

  constructor(
    private readonly onFrame: (f: Frame) => void,
    private readonly onDiscard: (d: Discarded) => void = () => {},
  ) {}

  push(chunk: Uint8Array): void {
    const joined = new Uint8Array(this.buf.length + chunk.length);
    joined.set(this.buf);
    joined.set(chunk, this.buf.length);
    this.buf = joined;
    this.drain();
  }

  /** Bytes held while waiting for the rest of a frame. */
  get pending(): number {
    return this.buf.length;
  }

  private attempt(at: number): Attempt {
    const b = this.buf;
    if (b.length - at < HEADER_LEN) return { kind: "incomplete" };
    const len = b[at + 4] as number;
    if (len > MAX_PAYLOAD) return { kind: "invalid", reason: "bad_length" };
    const total = FRAME_OVERHEAD + len;
    if (b.length - at < total) return { kind: "incomplete" };
    if (b[at + total - 1] !== ETX) return { kind: "invalid", reason: "bad_end" };
    const crc = (b[at + HEADER_LEN + len] as number) | ((b[at + HEADER_LEN + len + 1] as number) << 8);
    if (checksum(b.subarray(at + 1, at + HEADER_LEN + len)) !== crc)
      return { kind: "invalid", reason: "bad_checksum" };
    return { kind: "valid", total };
  }

  private drop(n: number, reason: Discarded["reason"]) {
    this.onDiscard({ bytes: this.buf.slice(0, n), reason });
    this.buf = this.buf.slice(n);
  }

  private drain() {
    for (;;) {
      const start = this.buf.indexOf(STX);
      if (start < 0) {
        if (this.buf.length > 0) this.drop(this.buf.length, "no_start");
        return;
      }
      if (start > 0) this.drop(start, "no_start");
      const a = this.attempt(0);
      if (a.kind === "invalid") {
        this.drop(1, a.reason);
        continue;
      }
      if (a.kind === "incomplete") {
        const later = this.laterValidStart();
        if (later < 0) return;
        this.drop(later, "stale_start");
        continue;
      }
      const b = this.buf;
      const len = b[4] as number;
      const frame: Frame = {
        addr: b[1] as number,
        seq: b[2] as number,
        cmd: b[3] as number,
        payload: b.slice(HEADER_LEN, HEADER_LEN + len),
      };
      this.buf = b.slice(a.total);
      this.onFrame(frame);
    }
  }

  private laterValidStart(): number {
    for (let i = this.buf.indexOf(STX, 1); i > 0; i = this.buf.indexOf(STX, i + 1)) {
      if (this.attempt(i).kind === "valid") return i;
    }
    return -1;
  }
}
