import {
  PHOTO_MAX_PARTS,
  PHOTO_MIME_TYPES,
  PHOTO_PART_BYTES,
  type PhotoPart,
} from "../../shared/wire/messages.ts";
import type { Photo } from "../ports.ts";

type PartMessage = Omit<PhotoPart, "gateway_id" | "seq" | "observed_at">;

/**
 * A photo as outbox messages (docs/decisions/photos.md): parts of at most PHOTO_PART_BYTES, base64, so
 * each MQTT packet stays under the broker's limit. Returns a reason instead when the cloud would refuse
 * the photo (a type it does not serve, an empty or oversized capture), so the command ends in ERROR.
 */
export function photoParts(
  ids: { command_id: string; device_id: string },
  photo: Photo,
): PartMessage[] | { refused: string } {
  const mime = PHOTO_MIME_TYPES.find((m) => m === photo.mime);
  if (!mime) return { refused: `the camera returned ${photo.mime || "an untyped image"}, not a photo type` };
  if (photo.bytes.length === 0) return { refused: "the camera returned an empty photo" };
  const parts = Math.ceil(photo.bytes.length / PHOTO_PART_BYTES);
  if (parts > PHOTO_MAX_PARTS) return { refused: `the photo is too large (${photo.bytes.length} bytes)` };
  const bytes = Buffer.from(photo.bytes.buffer, photo.bytes.byteOffset, photo.bytes.length);
  return Array.from({ length: parts }, (_, i) => ({
    type: "photo",
    command_id: ids.command_id,
    device_id: ids.device_id,
    part: i + 1,
    parts,
    mime,
    data: bytes.subarray(i * PHOTO_PART_BYTES, (i + 1) * PHOTO_PART_BYTES).toString("base64"),
  }));
}
