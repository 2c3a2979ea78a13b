import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { PhotoStore } from "../ports.ts";

/** The PhotoStore port as files: `<dir>/<command id>.jpg`, the directory made on first use. */
export function createPhotoFiles(dir: string): PhotoStore {
  return {
    save(commandId, photo) {
      mkdirSync(dir, { recursive: true });
      writeFileSync(path.join(dir, `${commandId}.jpg`), photo.bytes);
    },
  };
}
