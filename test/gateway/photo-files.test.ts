import { randomUUID } from "node:crypto";
import { existsSync, mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createPhotoFiles, GATEWAY_PHOTOS_KEPT } from "../../gateway/adapters/files/photo-files.ts";

/** The gateway's own copies of its photos under state_dir/photos (docs/decisions/photos.md). */

let dir: string;
beforeEach(() => {
  dir = path.join(mkdtempSync(path.join(tmpdir(), "gw-photos-")), "photos");
});
afterEach(() => rmSync(path.dirname(dir), { recursive: true, force: true }));

describe("the gateway's photo files", () => {
  it(`keep the newest ${GATEWAY_PHOTOS_KEPT}: each save deletes the oldest past that`, () => {
    const files = createPhotoFiles(dir);
    const ids: string[] = [];
    const past = Date.now() / 1000 - 3_600;
    for (let i = 0; i < GATEWAY_PHOTOS_KEPT + 2; i++) {
      const id = randomUUID();
      ids.push(id);
      files.save(id, { bytes: new Uint8Array([0xff, 0xd8, i, 0xff, 0xd9]), mime: "image/jpeg" });
      // Taken a second apart, an hour ago: every later save is newer than all of these.
      utimesSync(path.join(dir, `${id}.jpg`), past + i, past + i);
    }
    expect(readdirSync(dir).sort()).toEqual(
      ids
        .slice(2)
        .map((id) => `${id}.jpg`)
        .sort(),
    );
    expect(existsSync(path.join(dir, `${ids[0]}.jpg`))).toBe(false);
  });

  it("leave files that are not photos alone", () => {
    const files = createPhotoFiles(dir, 1);
    files.save("a", { bytes: new Uint8Array([1]), mime: "image/jpeg" });
    utimesSync(path.join(dir, "a.jpg"), 1, 1);
    writeFileSync(path.join(dir, "notes.txt"), "kept");
    utimesSync(path.join(dir, "notes.txt"), 0, 0);
    files.save("b", { bytes: new Uint8Array([2]), mime: "image/jpeg" });
    expect(readdirSync(dir).sort()).toEqual(["b.jpg", "notes.txt"]);
  });
});
