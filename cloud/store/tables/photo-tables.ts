import type { PhotoPart } from "../../../shared/wire/messages.ts";

/** Store tables of take-photo photos (see cloud/store/schema.ts for the conventions; docs/decisions/photos.md). */

/** A part of a photo still being assembled; the parts go once the photo is whole. */
export interface PhotoPartsTable {
  command_id: string;
  /** 1-based */
  part: number;
  parts: number;
  mime: PhotoPart["mime"];
  /** This part's bytes, base64, as they came over the wire */
  data: string;
  received_at: string;
}

/** A whole photo, served at /device/v1/commands/{command_id}/photo to the device's operator. */
export interface PhotosTable {
  command_id: string;
  device_id: string;
  operator_id: string;
  mime: PhotoPart["mime"];
  /** The image, base64 text: one column type that reads and writes alike on SQLite and PostgreSQL */
  bytes: string;
  /** Raw size in bytes */
  size: number;
  /** When the gateway took it (the SUCCESS's observed_at is the same moment, on the gateway's clock) */
  taken_at: string;
  received_at: string;
  /** When retention deleted its bytes (then `bytes` is ""); null while it is kept. */
  pruned_at: string | null;
}

export interface PhotoTables {
  photo_parts: PhotoPartsTable;
  photos: PhotosTable;
}
