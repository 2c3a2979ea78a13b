import net from "node:net";
import type { SerialLink } from "../ports.ts";

/**
 * `tcp://host:port`: a serial line carried over TCP (a serial device server, or the standalone simulator).
 * Resolves once connected; a refused connection rejects like a missing device.
 */
export async function openTcpLink(url: string): Promise<SerialLink> {
  const u = new URL(url);
  if (u.protocol !== "tcp:" || !u.port) throw new Error(`not a tcp://host:port serial URL: ${url}`);
  const socket = net.createConnection({ host: u.hostname, port: Number(u.port) });
  socket.setNoDelay(true); // a request frame should leave at once, not wait for more bytes
  await new Promise<void>((resolve, reject) => {
    socket.once("connect", resolve);
    socket.once("error", reject);
  });
  return socket;
}
