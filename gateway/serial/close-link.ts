import type { SerialLink } from "../ports.ts";

/**
 * Closes a link for good, whatever its kind; resolves once it is closed. A serialport is closed with
 * close(): destroy() alone leaves the device locked, and the port could not be opened again.
 */
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
