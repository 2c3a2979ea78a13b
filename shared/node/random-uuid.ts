import { closeSync, openSync, readSync } from "node:fs";

/**
 * A random (version 4) UUID, as crypto.randomUUID() makes, from the kernel's random source. The gateway
 * daemon needs a few (a session token per broker connection, its outbox's identity, a card query's id), and
 * node:crypto loads some forty modules of Node's own to give them: ~2 MB of a controller's resident memory
 * (docs/decisions/gateway-memory.md). The unit's DevicePolicy=closed keeps /dev/urandom readable.
 */
export function randomUuid(): string {
  const b = Buffer.allocUnsafe(16);
  const fd = openSync("/dev/urandom", "r");
  try {
    readSync(fd, b, 0, 16, null);
  } finally {
    closeSync(fd);
  }
  b[6] = ((b[6] as number) & 0x0f) | 0x40; // version 4
  b[8] = ((b[8] as number) & 0x3f) | 0x80; // RFC 9562 variant
  const h = b.toString("hex");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}
