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
    return { bytes: Uint8Array.from([0xff, 0xd8, ...JFIF_APP0, ...com, 0xff, 0xd9]), mime: "image/jpeg" };
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
