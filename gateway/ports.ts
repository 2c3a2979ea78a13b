/**
 * The gateway's ports (owned here, named in domain terms). Adapters implement them; only compose.ts
 * knows both sides. The simulator's links and lines fit these shapes structurally.
 */
import type { Duplex } from "node:stream";

/**
 * A byte link to a serial device: serialport on a device path, a TCP socket, or an in-memory pair from the
 * simulator. Single use: after 'close' the factory is asked for a new one.
 */
export type SerialLink = Duplex & {
  /** serialport's close: unlike destroy(), it releases the device's lock, so the port can be reopened. */
  close?(callback?: (err: Error | null) => void): void;
  isOpen?: boolean;
};

/** Closes a link for good, whatever its kind; resolves once it is closed. */
export function closeLink(link: SerialLink): Promise<void> {
  return new Promise<void>((resolve) => {
    if (link.close && link.isOpen) {
      link.close(() => {
        link.destroy();
        resolve();
      });
      return;
    }
    if (link.destroyed) return resolve();
    link.once("close", () => resolve());
    link.destroy();
  });
}

export type SerialLinkFactory = (path: string, baudRate: number) => Promise<SerialLink>;

export interface GpioLine {
  read(): boolean;
  write(value: boolean): void;
  /** Calls back on every change; returns the unsubscribe function. */
  watch(onChange: (value: boolean) => void): () => void;
}

export interface GpioBank {
  /** The line configured under this name (e.g. "door_strike:north"); throws for an unknown name. */
  line(name: string): GpioLine;
  close(): void;
}

/** A camera on the GUARD (take-photo). */
export interface Camera {
  capture(): Promise<{ bytes: Uint8Array; mime: string }>;
}
