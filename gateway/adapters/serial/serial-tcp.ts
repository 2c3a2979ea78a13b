import net from "node:net";
import type { SerialLink } from "../../ports.ts";

/** A device server that neither accepts nor refuses (gone from the network) fails the open after this. */
const CONNECT_TIMEOUT_MS = 5_000;

/**
 * `tcp://host:port`: a serial line carried over TCP (a serial device server, or the standalone simulator).
 * Resolves once connected; a refused or unanswered connection rejects like a missing device, so the
 * owner's reopen backoff (not the kernel's two minutes of SYN retries) sets the pace.
 */
export async function openTcpLink(url: string, timeoutMs = CONNECT_TIMEOUT_MS): Promise<SerialLink> {
  const u = new URL(url);
  if (u.protocol !== "tcp:" || !u.port) throw new Error(`not a tcp://host:port serial URL: ${url}`);
  const socket = net.createConnection({ host: u.hostname, port: Number(u.port) });
  socket.setNoDelay(true); // a request frame should leave at once, not wait for more bytes
  socket.setTimeout(timeoutMs);
  try {
    await new Promise<void>((resolve, reject) => {
      socket.once("connect", resolve);
      socket.once("error", reject);
      socket.once("timeout", () => reject(new Error(`ETIMEDOUT: no answer from ${url}`)));
    });
  } catch (err) {
    socket.destroy();
    throw err;
  } finally {
    socket.removeAllListeners("timeout");
  }
  // An idle serial line is normal: the timeout guarded the connect only.
  socket.setTimeout(0);
  return socket;
}
