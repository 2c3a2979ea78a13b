import { mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { PhotoStore } from "../../ports.ts";

/**
 * How many photos the gateway keeps of its own: the cloud has them (30 days); these are for a technician
 * on site and must not fill the controller's disk (docs/decisions/photos.md).
 */
export const GATEWAY_PHOTOS_KEPT = 20;

/**
 * The PhotoStore port as files: `<dir>/<command id>.jpg`, the directory made on first use. Each save keeps
 * the newest `keep` photos (by modification time) and deletes the rest.
 */
export function createPhotoFiles(dir: string, keep = GATEWAY_PHOTOS_KEPT): PhotoStore {
  function prune() {
    const photos = readdirSync(dir)
      .filter((name) => name.endsWith(".jpg"))
      .map((name) => ({ name, mtime: statSync(path.join(dir, name)).mtimeMs }))
      .sort((a, b) => b.mtime - a.mtime || b.name.localeCompare(a.name));
    for (const old of photos.slice(keep)) rmSync(path.join(dir, old.name), { force: true });
  }
  return {
    save(commandId, photo) {
      mkdirSync(dir, { recursive: true });
      writeFileSync(path.join(dir, `${commandId}.jpg`), photo.bytes);
      prune();
    },
  };
}
