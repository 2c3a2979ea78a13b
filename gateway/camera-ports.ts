/** The GUARD's camera as the gateway's features see it (take-photo); re-exported by ports.ts. */
export type Photo = { bytes: Uint8Array; mime: string };

/** A camera on the GUARD (take-photo). */
export interface Camera {
  capture(): Promise<Photo>;
}

/** Where taken photos are kept, by the command that took them. */
export interface PhotoStore {
  save(commandId: string, photo: Photo): void;
}
