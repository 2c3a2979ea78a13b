/**
 * A camera for take-photo: returns a tiny but well-formed JPEG (SOI, a JFIF APP0 segment, EOI) so code
 * that sniffs the magic bytes or stores the blob behaves as with a real capture; fails on demand.
 */
const JFIF_APP0 = [
  0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00, 0x01, 0x01, 0x00, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00,
];

export type Capture = { bytes: Uint8Array; mime: string };

export class SimCamera {
  /** How many captures succeeded. */
  captures = 0;
  /** The last photo taken, to compare with what reached the cloud. */
  last: Capture | null = null;
  /** Pads each photo to at least this many bytes, like a full-size frame (0: as small as it gets). */
  private minBytes = 0;
  private failures = 0;
  private broken: Error | null = null;

  async capture(): Promise<Capture> {
    // A real capture is never synchronous; keep callers honest about awaiting it.
    await new Promise((r) => setImmediate(r));
    if (this.broken) throw this.broken;
    if (this.failures > 0) {
      this.failures--;
      throw new Error("camera: capture failed");
    }
    this.captures++;
    // The frame counter in the comment segment makes each photo distinct.
    const comment = Array.from(Buffer.from(`sim photo ${this.captures}`));
    const com = [0xff, 0xfe, 0x00, comment.length + 2, ...comment];
    const head = Uint8Array.from([0xff, 0xd8, ...JFIF_APP0, ...com]);
    const bytes = concat([head, ...padding(this.minBytes - head.length - 2), Uint8Array.of(0xff, 0xd9)]);
    this.last = { bytes, mime: "image/jpeg" };
    return this.last;
  }

  /** Later photos are at least `bytes` long (0: back to the smallest). */
  setFrameSize(bytes: number): void {
    this.minBytes = bytes;
  }

  /** The next `n` captures fail. */
  failNext(n = 1): void {
    this.failures += n;
  }

  /** Every capture fails with `error` until repaired with null (unplugged or dead camera). */
  setBroken(error: Error | null = new Error("camera: not responding")): void {
    this.broken = error;
  }
}

/** APP15 segments of filler (at most 64 KiB each, as JPEG segments are) making up at least `n` bytes. */
function padding(n: number): Uint8Array[] {
  const out: Uint8Array[] = [];
  for (let left = n; left > 0; ) {
    const body = Math.min(0xffff - 2, Math.max(left - 4, 0));
    const seg = new Uint8Array(4 + body);
    seg.set([0xff, 0xef, (body + 2) >> 8, (body + 2) & 0xff]);
    for (let i = 0; i < body; i++) seg[4 + i] = (i * 31 + out.length) & 0x7f;
    out.push(seg);
    left -= seg.length;
  }
  return out;
}

function concat(chunks: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}
