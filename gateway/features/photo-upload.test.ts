import { describe, expect, it } from "vitest";
import { PHOTO_MAX_PARTS, PHOTO_PART_BYTES, PhotoPart } from "../../shared/wire/messages.ts";
import { photoParts } from "./photo-upload.ts";

const IDS = {
  command_id: "cccccccc-0000-4000-8000-000000000001",
  device_id: "dddddddd-0000-4000-8000-000000000001",
};
const WIRE = { gateway_id: "gw-1", seq: 1, observed_at: "2025-01-01T00:00:00.000Z" };

function photo(length: number, mime = "image/jpeg") {
  const bytes = new Uint8Array(length);
  for (let i = 0; i < length; i++) bytes[i] = (i * 7 + 3) % 256;
  return { bytes, mime };
}

describe("photoParts", () => {
  it("splits a photo into parts of at most PHOTO_PART_BYTES that join back to the same bytes", () => {
    const p = photo(2 * PHOTO_PART_BYTES + 5);
    const parts = photoParts(IDS, p);
    if ("refused" in parts) throw new Error(parts.refused);
    expect(parts.map((m) => [m.part, m.parts])).toEqual([
      [1, 3],
      [2, 3],
      [3, 3],
    ]);
    const raw = parts.map((m) => Buffer.from(m.data, "base64"));
    expect(raw.map((b) => b.length)).toEqual([PHOTO_PART_BYTES, PHOTO_PART_BYTES, 5]);
    expect(Buffer.concat(raw).equals(Buffer.from(p.bytes))).toBe(true);
  });

  it("writes messages the wire schema accepts, each well under the broker's 256 KB packet limit", () => {
    const parts = photoParts(IDS, photo(PHOTO_PART_BYTES + 1));
    if ("refused" in parts) throw new Error(parts.refused);
    for (const m of parts) {
      const full = PhotoPart.parse({ ...m, ...WIRE });
      expect(full).toMatchObject({ ...IDS, mime: "image/jpeg" });
      expect(Buffer.byteLength(JSON.stringify(full))).toBeLessThan(140 * 1024);
    }
  });

  it("sends a small photo as one part", () => {
    const parts = photoParts(IDS, photo(40, "image/png"));
    expect(parts).toEqual([
      { type: "photo", ...IDS, part: 1, parts: 1, mime: "image/png", data: expect.any(String) },
    ]);
  });

  it("refuses what the cloud would not serve: another type, an empty capture, an oversized one", () => {
    expect(photoParts(IDS, photo(10, "text/html"))).toEqual({ refused: expect.stringMatching(/text\/html/) });
    expect(photoParts(IDS, photo(0))).toEqual({ refused: expect.stringMatching(/empty/) });
    expect(photoParts(IDS, photo(PHOTO_MAX_PARTS * PHOTO_PART_BYTES + 1))).toEqual({
      refused: expect.stringMatching(/too large/),
    });
  });
});
